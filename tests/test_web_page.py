"""The web chat page, end to end in real headless Chromium (Debian's, driven by Playwright)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from docubot.rag.answer import DocuBot
from docubot.server.app import create_app
from docubot.server.users import UserStore
from tests.corpus_fixtures import with_sample_corpus
from tests.servers import serving

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium not found: run `make system-deps` (Debian package chromium)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def site(sample_settings, embedder, tmp_path) -> Iterator[tuple[str, str]]:
    settings = with_sample_corpus(sample_settings, f"sqlite:///{tmp_path / 'web.db'}")
    bot = DocuBot(settings, embedder=embedder, chat_model=None)
    _, key = UserStore(bot.db).add("anna")
    with serving(create_app(settings, bot)) as url:
        yield url, key
    bot.db.close()


def log_in(page, url: str, key: str) -> None:
    page.goto(url)
    page.fill("#api-key", key)
    page.click("#key-form button")


def start_session(page, url: str, key: str) -> None:
    log_in(page, url, key)
    page.click("#new-session")


def test_ask_in_the_page_and_see_the_streamed_answer_with_sources(browser, site, tmp_path) -> None:
    url, key = site
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    start_session(page, url, key)
    page.fill("#question", "Com exporto un informe a PDF?")
    page.click("#send")
    answer = page.locator(".msg.bot").last
    answer.locator(".sources a").first.wait_for(timeout=20_000)
    assert "PDF" in answer.locator(".text").inner_text()
    link = answer.locator(".sources a").first
    assert link.inner_text().startswith("[Informes i exportació >")
    assert "v2026.2" in answer.locator(".sources li").first.inner_text()
    assert answer.locator(".badge").inner_text().startswith("confiança ")
    assert page.locator("#sessions li").count() == 1
    assert "Com exporto" in page.locator("#sessions li button.open").inner_text()
    page.screenshot(path=str(tmp_path / "desktop.png"))

    page.reload()  # the key is remembered; the conversation is still there
    page.locator("#sessions li button.open").click()
    page.locator(".msg.bot .sources a").first.wait_for(timeout=10_000)
    page.locator("#sessions li button.delete").click()
    page.wait_for_function("document.querySelectorAll('#sessions li').length === 0")
    assert page.locator("#chat").is_hidden()


def test_the_page_fits_a_phone_screen(browser, site, tmp_path) -> None:
    url, key = site
    page = browser.new_page(viewport={"width": 375, "height": 740}, device_scale_factor=2)
    start_session(page, url, key)
    page.fill("#question", "Com restableixo la contrasenya si l'he oblidada del tot?")
    page.click("#send")
    page.locator(".msg.bot .sources a").first.wait_for(timeout=20_000)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
    for selector in ("#ask-form", ".msg.bot", "#sessions"):
        box = page.locator(selector).first.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375
    page.screenshot(path=str(tmp_path / "phone.png"), full_page=True)


def test_a_wrong_key_is_told_and_nothing_else_shows(browser, site) -> None:
    url, _ = site
    page = browser.new_page()
    log_in(page, url, "dbk_wrong")
    page.wait_for_function("document.getElementById('notice').textContent.length > 0")
    assert "missing or unknown API key" in page.inner_text("#notice")
    assert page.locator("#sidebar").is_hidden()


def test_model_text_is_shown_as_text_never_as_html(browser, site) -> None:
    url, key = site
    page = browser.new_page()
    start_session(page, url, key)
    page.fill("#question", "<img src=x onerror=\"document.title='pwned'\"> Com exporto un informe a PDF?")
    page.click("#send")
    page.locator(".msg.bot .sources a").first.wait_for(timeout=20_000)
    assert page.title() == "DocuBot"
    assert page.locator(".msg.user img").count() == 0
    assert "<img" in page.locator(".msg.user .text").inner_text()
