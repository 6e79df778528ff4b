"""`docubot chat`: an interactive conversation in the terminal, answers streamed."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from docubot.chat.conversation import DEFAULT_POLICY, Conversation, PolicyError
from docubot.cli.common import console, err_console, fail, load_settings
from docubot.llm import ProviderError
from docubot.llm.model_file import ModelFileError
from docubot.rag.answer import DocuBot, EmptyStoreError, QuestionError
from docubot.store import StoreError

HELP = (
    "/sources  sources of the last answer   /history  the conversation   /sent  what the model saw last\n"
    "/policy NAME  change the history policy   /cost  tokens per turn   /reset  start over   /quit"
)


def register(app: typer.Typer) -> None:
    app.command("chat")(chat_command)


def chat_command(
    session: str = typer.Option(
        "default", "--session", help="A name for this conversation (kept in memory)."
    ),
    policy: str = typer.Option(
        DEFAULT_POLICY,
        "--policy",
        help="full, last_turns:N, summary:N, sliding_window:N, relevant, token_budget:N.",
    ),
    llm: str = typer.Option(None, "--llm", help="local | openai | anthropic | none (default: DOCUBOT_LLM)."),
    show_tokens: bool = typer.Option(False, "--tokens", help="Show the tokens of each turn."),
) -> None:
    """Talk with DocuBot about the docs; follow-up questions understand the earlier ones."""
    settings = load_settings(llm=llm)
    try:
        conversation = Conversation(DocuBot(settings), policy)
    except (PolicyError, ProviderError, ModelFileError, StoreError) as exc:
        fail(str(exc))
    bot = conversation.bot
    console.print(
        f"[bold]DocuBot[/] · session {session} · policy {conversation.policy.name} · {bot.provider}"
    )
    console.print(f"[dim]{HELP}[/]", highlight=False)
    while True:
        try:
            text = console.input("[bold cyan]› [/]").strip()
        except (EOFError, KeyboardInterrupt):
            console.print()
            return
        if not text:
            continue
        if text.startswith("/"):
            if not _command(conversation, text):
                return
            continue
        try:
            result = conversation.send(
                text,
                on_text=lambda piece: console.print(piece, end="", markup=False, highlight=False),
                on_status=lambda note: err_console.print(f"[dim]… {note}[/]", highlight=False),
            )
        except (QuestionError, EmptyStoreError) as exc:
            err_console.print(f"[red]{exc}[/]")
            continue
        sources = ", ".join(result.answer.fonts) or "sense fonts"
        console.print(f"\n[dim]confiança {result.answer.confianca} · {sources}[/]")
        if show_tokens:
            turn = conversation.ledger[-1]
            console.print(
                f"[dim]tokens in {turn.input_tokens}, out {turn.output_tokens}, {turn.calls} calls[/]"
            )


def _command(conversation: Conversation, text: str) -> bool:
    """Run a slash command; False means quit."""
    name, _, arg = text.partition(" ")
    if name in ("/quit", "/exit"):
        return False
    if name == "/sources" and conversation.last_result:
        for s in conversation.last_result.sources:
            console.print(
                f"  [cyan]{s.url}[/]  [{s.section}]  v{s.version}  ({s.similarity:.3f})", highlight=False
            )
    elif name == "/history":
        for m in conversation.messages:
            console.print(f"[bold]{m.role}:[/] {m.content}", highlight=False)
    elif name == "/sent":
        console.print(json.dumps(conversation.last_sent_messages, ensure_ascii=False, indent=2), markup=False)
    elif name == "/policy":
        try:
            conversation.set_policy(arg.strip())
            console.print(f"policy: {conversation.policy.name}")
        except PolicyError as exc:
            err_console.print(f"[red]{exc}[/]")
    elif name == "/cost":
        table = Table("turn", "policy", "tokens in", "tokens out", "calls", "ms", "rewrite")
        for t in conversation.ledger:
            table.add_row(
                str(t.turn),
                t.policy,
                str(t.input_tokens),
                str(t.output_tokens),
                str(t.calls),
                f"{t.latency_ms:.0f}",
                t.rewrite or "",
            )
        console.print(table)
        console.print(conversation.totals())
    elif name == "/reset":
        conversation.reset()
        console.print("conversation cleared")
    else:
        console.print(HELP, highlight=False)
    return True
