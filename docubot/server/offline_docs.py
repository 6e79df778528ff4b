"""`/docs` without the internet: Swagger UI's assets served from the `swagger-ui-bundle-v2` package.

FastAPI's own `/docs` and `/redoc` load their scripts from a CDN, so they stay blank on a machine
without internet access. This replaces `/docs` with the same page on local assets, and drops
`/redoc` (no offline bundle). Without the package, FastAPI's pages are left as they are.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"


def serve_docs_offline(app: FastAPI) -> None:
    """Swap FastAPI's CDN-loaded `/docs` for one on packaged assets (when the package is installed)."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        return
    replaced = {app.docs_url, app.redoc_url, app.swagger_ui_oauth2_redirect_url}
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) not in replaced]
    app.mount(ASSETS, StaticFiles(directory=swagger_ui_path), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} – API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
        )
