"""The web chat page, end to end in real headless Chromium (Debian's, driven by Playwright).

Waits use Playwright's locators and `expect`, never `wait_for_function` with a string: the page's
Content-Security-Policy forbids evaluating strings, and Playwright's string predicates need that.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from docubot.llm import ChatRequest, StreamEvent
from docubot.rag.answer import DocuBot
from docubot.server.app import create_app
from docubot.server.users import UserStore
from tests.corpus_fixtures import with_sample_corpus
from tests.fakes import ConversationModel, grounded_reply
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
PDF = "Com exporto un informe a PDF?"
PASSWORD = "Com restableixo la contrasenya?"
WAIT_MS = 60_000  # answers on a loaded 2-core machine
DOCS_BASE_URL = "https://docs.nubelia.cat/"


class PageModel(ConversationModel):
    """A scripted model (control flow only): grounded replies with the menu path in bold, plus
    `extra` text, each piece `delay_s` after the last."""

    def __init__(self) -> None:
        super().__init__()
        self.delay_s = 0.0
        self.extra = ""

    def _reply(self, request: ChatRequest) -> str:
        if request.system.startswith(("Reescriu", "Resumeix")):
            return super()._reply(request)
        reply = json.loads(grounded_reply(request.messages[-1].content))
        bold = reply["resposta"].replace("*Informes > Exportar*", "**Informes > Exportar**")
        return json.dumps({**reply, "resposta": bold + self.extra}, ensure_ascii=False)

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        for event in super().stream(request):
            time.sleep(self.delay_s)
            yield event


@dataclass
class Site:
    url: str
    key: str
    model: PageModel | None = None

    def session(self, session_id: str) -> dict:
        headers = {"Authorization": f"Bearer {self.key}"}
        return httpx.get(f"{self.url}/v1/sessions/{session_id}", headers=headers, timeout=30).json()

    def sessions(self) -> list[dict]:
        headers = {"Authorization": f"Bearer {self.key}"}
        return httpx.get(f"{self.url}/v1/sessions", headers=headers, timeout=30).json()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium not found: run `make system-deps` (Debian package chromium)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


def _serve(sample_settings, embedder, tmp_path, model: PageModel | None) -> Iterator[Site]:
    settings = with_sample_corpus(sample_settings, f"sqlite:///{tmp_path / 'web.db'}")
    bot = DocuBot(settings, embedder=embedder, chat_model=model)
    _, key = UserStore(bot.db).add("anna")
    with serving(create_app(settings, bot)) as url:
        yield Site(url, key, model)
    bot.db.close()


@pytest.fixture
def site(sample_settings, embedder, tmp_path) -> Iterator[Site]:
    """The page over the sample docs, answering with the extractive provider."""
    yield from _serve(sample_settings, embedder, tmp_path, None)


@pytest.fixture
def linked_site(sample_settings, embedder, tmp_path) -> Iterator[Site]:
    """As `site`, with the docs published at `DOCS_BASE_URL`."""
    yield from _serve(sample_settings.with_overrides(docs_base_url=DOCS_BASE_URL), embedder, tmp_path, None)


@pytest.fixture
def model_site(sample_settings, embedder, tmp_path) -> Iterator[Site]:
    """The page over the sample docs, answering with `PageModel`."""
    yield from _serve(sample_settings, embedder, tmp_path, PageModel())


def log_in(page, site: Site) -> None:
    page.goto(site.url)
    page.fill("#api-key", site.key)
    page.click("#key-form button")
    page.locator("#sidebar").wait_for()


def ask(page, question: str) -> object:
    """Type and send `question` with Enter; the answer's bubble."""
    page.fill("#question", question)
    page.press("#question", "Enter")
    return page.locator(".msg.bot").last


def answered(answer) -> None:
    answer.locator(".meta").wait_for(timeout=WAIT_MS)


RECORD_STATUSES = """() => {
  window.statuses = [];
  const seen = () => {
    for (const line of document.querySelectorAll(".msg.bot .status")) {
      const text = line.hidden ? "" : line.textContent;
      if (text && window.statuses[window.statuses.length - 1] !== text) window.statuses.push(text);
    }
  };
  new MutationObserver(seen).observe(document.getElementById("messages"),
    { subtree: true, childList: true, characterData: true, attributes: true });
}"""
"""Records every status line the answer bubbles show, in order (Playwright's polling could miss one)."""
COMMENT = "Volia saber com fer-ho amb Excel."


def test_status_line_then_a_bold_menu_path_then_stop_and_retry(browser, model_site) -> None:
    """The issue's "done when", in one run: the status line, then the menu path in bold; 👎 with a
    comment; a slow answer stopped (nothing stored) and retried; after a reload all of it is there."""
    from playwright.sync_api import expect

    assert model_site.model is not None
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    log_in(page, model_site)
    page.evaluate(RECORD_STATUSES)
    model_site.model.delay_s = 0.05
    answer = ask(page, PDF)
    expect(answer.locator(".status")).to_contain_text("Generant la resposta", timeout=WAIT_MS)
    expect(answer.locator(".text strong")).to_have_text("Informes > Exportar", timeout=WAIT_MS)
    assert (
        answer.locator(".text").evaluate("e => e.innerHTML").count("<strong>Informes &gt; Exportar</strong>")
        == 1
    )
    expect(answer.locator(".status")).to_be_hidden()
    statuses = page.evaluate("() => window.statuses")
    assert statuses[0] == "Cercant a la documentació…", statuses
    found = next(i for i, s in enumerate(statuses) if re.fullmatch(r"\d+ fragments trobats; .*", s))
    assert statuses.index("Generant la resposta…") > found > 0, statuses  # searching, found, generating
    [session] = model_site.sessions()

    answer.locator(".feedback .rate.down").click()
    answer.locator(".comment-form textarea").fill(COMMENT)
    answer.locator(".comment-form button").click()
    expect(answer.locator(".feedback .comment")).to_contain_text(COMMENT)
    assert model_site.session(session["id"])["messages"][0]["feedback"]["comment"] == COMMENT

    model_site.model.delay_s = 0.1  # slow enough to stop midway
    stopped = ask(page, PASSWORD)
    expect(stopped.locator(".text")).to_contain_text("Resposta a", timeout=WAIT_MS)
    page.click("#stop")
    expect(stopped.locator(".status")).to_contain_text("Resposta aturada", timeout=10_000)
    half = stopped.locator(".text").inner_text()
    time.sleep(1.5)  # the server notices at its next piece of text
    assert model_site.session(session["id"])["turns"] == 1  # nothing of the stopped answer was stored

    model_site.model.delay_s = 0.0
    stopped.locator(".retry").click()
    retried = page.locator(".msg.bot").last
    answered(retried)
    assert page.locator(".msg.bot").count() == 2 and page.locator(".msg.user").count() == 2
    stored = model_site.session(session["id"])["messages"]
    assert [t["turn"] for t in stored] == [1, 2] and stored[1]["question"] == PASSWORD
    assert stored[1]["answer"]["resposta"].startswith(half.strip()[:20])
    assert len(stored[1]["answer"]["resposta"]) > len(half)  # the whole answer, not the stopped half

    page.reload()
    page.locator("#sessions li button.open").first.click()
    expect(page.locator(".msg.bot")).to_have_count(2)
    first = page.locator(".msg.bot").first
    expect(first.locator(".text strong")).to_have_text("Informes > Exportar")
    expect(first.locator(".feedback .rate.down")).to_have_attribute("aria-pressed", "true")
    expect(first.locator(".feedback .comment")).to_contain_text(COMMENT)
    expect(page.locator(".msg.bot").last.locator(".feedback .rate.down")).to_have_attribute(
        "aria-pressed", "false"
    )


def test_feedback_with_a_comment_is_stored_and_shown_after_a_reload(browser, site) -> None:
    """Needs the feedback API (`PUT|DELETE /v1/sessions/{id}/turns/{turn}/feedback`)."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1100, "height": 800})
    log_in(page, site)
    answer = ask(page, PDF)
    answered(answer)
    answer.locator(".feedback .rate.down").click()
    expect(answer.locator(".feedback .rate.down")).to_have_attribute("aria-pressed", "true")
    answer.locator(".comment-form textarea").fill("Volia saber com fer-ho amb Excel.")
    answer.locator(".comment-form button").click()
    expect(answer.locator(".feedback .comment")).to_contain_text("Volia saber com fer-ho amb Excel.")
    [session] = site.sessions()
    feedback = site.session(session["id"])["messages"][0]["feedback"]
    assert feedback["rating"] == "down" and feedback["comment"] == "Volia saber com fer-ho amb Excel."

    page.reload()
    page.locator("#sessions li button.open").click()
    again = page.locator(".msg.bot").last
    expect(again.locator(".feedback .rate.down")).to_have_attribute("aria-pressed", "true")
    expect(again.locator(".feedback .rate.up")).to_have_attribute("aria-pressed", "false")
    expect(again.locator(".feedback .comment")).to_contain_text("Volia saber com fer-ho amb Excel.")
    again.locator(".feedback .rate.down").click()  # pressing it again takes the rating back
    expect(again.locator(".feedback .rate.down")).to_have_attribute("aria-pressed", "false")
    assert site.session(session["id"])["messages"][0]["feedback"] is None


def test_examples_sources_rename_search_and_keyboard(browser, site) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(site.url)
    expect(page.locator("#welcome")).to_contain_text("docubot users add")  # where a key comes from
    log_in(page, site)
    examples = page.locator("#empty .example")
    expect(examples).to_have_count(3)
    first = examples.first.inner_text()
    assert first == "Com puc convidar membres?"
    examples.first.click()
    answer = page.locator(".msg.bot").last
    answered(answer)
    assert page.locator(".msg.user .text").inner_text() == first
    expect(page.locator("#empty")).to_be_hidden()

    panel = answer.locator(".sources details").first  # no docs base URL: the section itself
    assert answer.locator(".sources a").count() == 0
    panel.locator("summary").click()
    expect(panel.locator(".section-text")).to_contain_text("Convida", timeout=WAIT_MS)

    expect(page.locator("#sessions li")).to_have_count(1)
    page.locator("#sessions li button.rename").click()
    page.fill("#sessions li .rename-form input", "Gent nova a l'equip")
    page.press("#sessions li .rename-form input", "Enter")
    expect(page.locator("#sessions li button.open")).to_have_text("Gent nova a l'equip")

    page.click("#new-session")
    expect(page.locator("#empty")).to_be_visible()
    expect(page.locator(".msg")).to_have_count(0)
    page.fill("#question", "Com exporto un informe")
    page.press("#question", "Shift+Enter")
    page.keyboard.type("a PDF?")
    assert page.input_value("#question") == "Com exporto un informe\na PDF?"
    assert page.locator(".msg").count() == 0  # Shift+Enter only breaks the line
    page.press("#question", "Enter")
    answered(page.locator(".msg.bot").last)
    expect(page.locator("#sessions li")).to_have_count(2)

    page.fill("#session-search", "GENT NOVA")  # case and accents do not matter
    expect(page.locator("#sessions li:visible")).to_have_count(1)
    expect(page.locator("#sessions li:visible button.open")).to_have_text("Gent nova a l'equip")
    page.fill("#session-search", "res d'això")
    expect(page.locator("#sessions li:visible")).to_have_count(0)
    expect(page.locator("#no-match")).to_be_visible()

    page.reload()
    expect(page.locator("#sessions li button.open").last).to_have_text("Gent nova a l'equip")
    page.locator("#sessions li button.delete").first.click()
    expect(page.locator("#sessions li")).to_have_count(1)


def test_the_page_fits_a_phone_screen(browser, site) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
    page.goto(site.url)
    assert _overflow(page) <= 0
    log_in(page, site)
    answer = ask(page, "Com restableixo la contrasenya si l'he oblidada del tot?")
    answered(answer)
    answer.locator(".sources summary").first.click()
    expect(answer.locator(".section-text").first).to_contain_text("contrasenya", timeout=WAIT_MS)
    assert _overflow(page) <= 0
    for selector in ("#ask-form", ".msg.bot", "#sessions", ".sources details", ".feedback"):
        box = page.locator(selector).first.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, selector


def _overflow(page) -> int:
    return int(
        page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )


def test_a_wrong_key_is_told_and_nothing_else_shows(browser, site) -> None:
    from playwright.sync_api import expect

    page = browser.new_page()
    page.goto(site.url)
    page.fill("#api-key", "dbk_wrong")
    page.click("#key-form button")
    expect(page.locator("#notice")).to_contain_text("missing or unknown API key")
    assert page.locator("#sidebar").is_hidden()


INJECTED = (
    " Vegeu <img src=x onerror=alert()>. Vegeu [clica](javascript:alert()). Vegeu <svg onload=alert()>."
)
"""Markup a model could be tricked into writing (the answer checks let it through: no path, no identifier)."""


def test_injected_markup_in_questions_and_answers_stays_inert(browser, model_site) -> None:
    assert model_site.model is not None
    model_site.model.extra = INJECTED
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    log_in(page, model_site)
    answer = ask(page, f"{PDF} <img src=x onerror=alert()>.")
    answered(answer)
    assert "<img" in page.locator(".msg.user .text").inner_text()
    text = answer.locator(".text")
    assert "onerror=alert()" in text.inner_text() and "<svg onload" in text.inner_text()  # shown, as text
    assert text.locator("strong").count() == 1  # the markdown around it still renders
    assert page.locator(".msg img, .msg script, .msg .text svg").count() == 0  # (the thumbs are svg)
    assert text.locator("a").count() == 0  # the javascript: link is not a link
    assert "[clica](javascript:alert())" in text.inner_text()
    assert dialogs == []


CODE = "Informes > Exportar > CSV"
TABLE = "\n\n| format | on |\n|---|---|\n| CSV | Informes > Exportar |\n"


def test_code_blocks_get_a_copy_button_and_tables_scroll_in_their_bubble(browser, model_site) -> None:
    from playwright.sync_api import expect

    assert model_site.model is not None
    model_site.model.extra = f"\n\n```\n{CODE}\n```" + TABLE
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    log_in(page, model_site)
    answer = ask(page, PDF)
    answered(answer)
    code = answer.locator(".text .code")
    expect(code.locator("pre code")).to_have_text(CODE)
    code.locator("button.copy").click()
    expect(code.locator("button.copy")).to_have_text("Copiat!")
    assert page.evaluate("() => navigator.clipboard.readText()").strip() == CODE
    expect(code.locator("button.copy")).to_have_text("Copia", timeout=5_000)
    table = answer.locator(".text .table table")
    expect(table.locator("th").first).to_have_text("format")
    assert table.locator("td").all_inner_texts() == ["CSV", "Informes > Exportar"]
    assert answer.locator(".text .table").evaluate("e => getComputedStyle(e).overflowX") == "auto"
    context.close()


def test_with_a_docs_base_url_sources_link_to_the_published_section(browser, linked_site) -> None:
    from playwright.sync_api import expect

    page = browser.new_page()
    log_in(page, linked_site)
    answer = ask(page, PDF)
    answered(answer)
    link = answer.locator(".sources a").first
    href = f"{DOCS_BASE_URL}wiki/guies/informes-i-exportacio#exportar-informes"
    expect(link).to_have_attribute("href", href)
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(link).to_have_text("[Informes i exportació > Exportar informes]")
    assert answer.locator(".sources details").count() == 0  # links, not panels
