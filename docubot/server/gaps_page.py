"""The docs-gap page for admins: `GET /admin/gaps`, the clusters of `docubot gaps` as plain HTML.

Rendered on the server, every value escaped, no script and no outside asset (its stylesheet is
`/admin/gaps.css`, from here), so it passes the page's content-security policy. It needs an admin
key (`docubot users add NAME --admin`): as a bearer token, or as the password of HTTP Basic
authentication, which a browser asks for (any user name), so the page opens in a plain browser.
Query parameters: `days` (30) and `threshold`, as for the command.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from html import escape
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response

from docubot.gaps import DEFAULT_THRESHOLD, GapCluster, GapReport, gap_report
from docubot.rag.answer import DocuBot
from docubot.server.users import User, UserStore

REALM = 'Basic realm="DocuBot admin", charset="UTF-8"'
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #1f2328; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #d0d7de; padding: .5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.count { text-align: right; font-weight: bold; }
ul { margin: .3rem 0 0 1rem; padding: 0; color: #59636e; }
li.comment { color: #9a3412; }
form { margin: 1rem 0; }
"""


def gaps_router(bot: DocuBot, users: UserStore) -> APIRouter:
    """`/admin/gaps` (the page) and `/admin/gaps.css` over the app's bot and users."""
    router = APIRouter(prefix="/admin", include_in_schema=False)

    @router.get("/gaps", response_class=HTMLResponse)
    def gaps_page(
        request: Request,
        days: Annotated[float, Query(gt=0, le=3650)] = 30,
        threshold: Annotated[float, Query(ge=0, le=1)] = DEFAULT_THRESHOLD,
    ) -> HTMLResponse:
        admin_only(request, users.authenticate)
        report = gap_report(bot.db, bot.store, bot.embedder, days, threshold)
        return HTMLResponse(render(report))

    @router.get("/gaps.css")
    def gaps_style() -> Response:
        return Response(STYLE, media_type="text/css")

    return router


def admin_only(request: Request, authenticate: Callable[[str], User | None]) -> User:
    """The admin whose key the request carries (bearer, or Basic's password); else 401 or 403."""
    key = _key(request.headers.get("authorization", ""))
    user = authenticate(key) if key else None
    if user is None:
        raise HTTPException(401, "the gaps page needs an admin API key", headers={"WWW-Authenticate": REALM})
    if not user.admin:
        raise HTTPException(403, "the gaps page needs an admin key")
    return user


def _key(header: str) -> str | None:
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer":
        return value.strip() or None
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return None
        return decoded.partition(":")[2] or None
    return None


def render(report: GapReport) -> str:
    """The whole page: a summary line, a form for the period, one table row per cluster."""
    counts = ", ".join(f"{_REASONS[reason]} {n}" for reason, n in report.sources.items())
    rows = "\n".join(_row(c) for c in report.clusters) or (
        '<tr><td colspan="5">No refused, low-confidence or 👎 questions in this period.</td></tr>'
    )
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>DocuBot · docs gaps</title>
<link rel="stylesheet" href="/admin/gaps.css">
</head>
<body>
<h1>Docs gaps</h1>
<p>{report.questions} questions since {escape(report.since)} ({escape(counts)}) in
{len(report.clusters)} groups, largest first: what to write next.</p>
<form method="get" action="/admin/gaps">
<label>Days <input name="days" type="number" min="1" step="1" value="{report.days:g}"></label>
<input type="hidden" name="threshold" value="{report.threshold:g}">
<button type="submit">Show</button>
</form>
<table>
<thead><tr><th>count</th><th>representative question</th><th>why</th><th>last seen</th>
<th>nearest page</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
</body>
</html>
"""


_REASONS = {"refused": "refused", "low_confidence": "low confidence", "thumbs_down": "👎"}


def _row(cluster: GapCluster) -> str:
    others = [q for q in cluster.questions if q != cluster.representative]
    items = [f"<li>{escape(q)}</li>" for q in others]
    items += [f'<li class="comment">👎 “{escape(c)}”</li>' for c in cluster.comments]
    details = f"<ul>{''.join(items)}</ul>" if items else ""
    why = ", ".join(f"{_REASONS.get(k, k)} {v}" for k, v in cluster.reasons.items())
    page = cluster.nearest_page
    nearest = (
        f"{escape(page['url'])}<br><small>{escape(page['section'])} ({page['similarity']:.2f})</small>"
        if page
        else "–"
    )
    return (
        f'<tr><td class="count">{cluster.count}</td>'
        f"<td>{escape(cluster.representative)}{details}</td>"
        f"<td>{escape(why)}</td><td>{escape(cluster.last_seen)}</td><td>{nearest}</td></tr>"
    )
