"""Helpers shared by the CLI commands: settings, consoles, clean exits."""

from __future__ import annotations

import json
from typing import Any, NoReturn

import typer
from pydantic import ValidationError
from rich.console import Console

from docubot.components import Components
from docubot.config import Settings

console = Console()
err_console = Console(stderr=True)


def load_settings(**overrides: Any) -> Settings:
    try:
        return Settings().with_overrides(**overrides)
    except ValidationError as exc:
        fail(f"invalid configuration: {one_line(exc)}")
    except Exception as exc:  # a broken TOML file
        fail(f"invalid configuration: {exc}")


def one_line(exc: ValidationError) -> str:
    """`field: problem (got value)` for each problem, on one line (not pydantic's multi-line dump)."""
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']} (got {e['input']!r})" for e in exc.errors())


def load_components(**overrides: Any) -> Components:
    """The deployment's parts for these settings overrides; each is built when first used."""
    return Components.from_settings(load_settings(**overrides))


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a clear error on stderr and exit with `code`."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def print_json(data: Any) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
