"""Screenshots of the web page: `python docs/screenshots.py [--home DIR]`.

Serves the sample docs (examples/docs_nubelia) with the extractive provider (`DOCUBOT_LLM=none`:
the answer quotes the docs, no model needed), asks one question in Debian's headless Chromium and
writes docs/screenshots/desktop.png (1280×800) and docs/screenshots/phone.png (390×844): answers
rendered from markdown, their sources with one section opened. `--home` reuses a data folder that
already holds the sample docs (else they are ingested into a temporary one, about half a minute).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docubot.config import Settings  # noqa: E402
from docubot.db import Database  # noqa: E402
from docubot.embed.e5 import E5Embedder  # noqa: E402
from docubot.ingest.pipeline import ingest  # noqa: E402
from docubot.rag.answer import DocuBot  # noqa: E402
from docubot.server.app import create_app  # noqa: E402
from docubot.server.users import UserStore  # noqa: E402
from docubot.store.sql import SQLStore  # noqa: E402
from tests.servers import serving  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
QUESTIONS = ("Com convido un membre nou?", "Com exporto un informe a PDF?")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--home", type=Path, help="a data folder holding the sample docs (else a temporary one)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="docubot-shots-") as scratch:
        home = args.home or Path(scratch)
        settings = Settings(home=home, llm="none", cache_enabled=False)
        embedder = E5Embedder()
        with Database(settings) as db:
            if SQLStore(db).count() == 0:
                ingest(ROOT / "examples" / "docs_nubelia", settings, SQLStore(db), embedder)
        served = settings.with_overrides(database_url=f"sqlite:///{Path(scratch) / 'shots.db'}")
        _copy_corpus(settings, served)
        bot = DocuBot(served, embedder=embedder, chat_model=None)
        _, key = UserStore(bot.db).add("anna")
        with serving(create_app(served, bot)) as url:
            shoot(url, key)
        bot.db.close()
    print(f"wrote {OUT / 'desktop.png'} and {OUT / 'phone.png'}")


def _copy_corpus(source: Settings, target: Settings) -> None:
    """The chunks into a fresh database, so the screenshots show only this run's conversations."""
    from tests.corpus_fixtures import with_sample_corpus

    with_sample_corpus(source, str(target.database_url))


def shoot(url: str, key: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for name, viewport, scale in (("desktop", (1280, 800), 1), ("phone", (390, 844), 2)):
            page = browser.new_page(
                viewport={"width": viewport[0], "height": viewport[1]}, device_scale_factor=scale
            )
            page.goto(url)
            page.fill("#api-key", key)
            page.click("#key-form button")
            page.locator("#sidebar").wait_for()
            if name == "desktop":
                for question in QUESTIONS:
                    page.click("#new-session")
                    page.fill("#question", question)
                    page.press("#question", "Enter")
                    page.locator(".msg.bot .meta").wait_for(timeout=120_000)
            else:
                page.locator("#sessions li button.open").first.click()
            answer = page.locator(".msg.bot").last
            answer.locator(".meta").wait_for(timeout=120_000)
            answer.locator(".sources summary").first.click()
            expect(answer.locator(".section-text").first).not_to_have_text("Carregant…", timeout=30_000)
            if name == "phone":
                answer.scroll_into_view_if_needed()
            page.screenshot(path=str(OUT / f"{name}.png"))
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
