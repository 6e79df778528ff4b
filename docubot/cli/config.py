"""`docubot config show` and `docubot config path`: the effective settings and where each came from."""

from __future__ import annotations

import os
import re
import tomllib
from typing import Any

import typer

from docubot.cli.common import console, fail, load_settings, print_json
from docubot.config import Settings, config_file_path

config_app = typer.Typer(help="The effective configuration.", no_args_is_help=True)
SECRET_FIELDS = ("llm_api_key", "embed_api_key")
MASK = "****"


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")


def effective_settings(settings: Settings) -> list[dict[str, Any]]:
    """Each field's value (secrets masked) and its origin: env, config file or default."""
    from_file = _file_keys()
    rows = []
    for name, value in settings.model_dump(mode="json").items():
        if f"DOCUBOT_{name.upper()}" in {key.upper() for key in os.environ}:
            origin = "env"
        elif name in from_file:
            origin = "config file"
        else:
            origin = "default"
        rows.append({"name": name, "value": _masked(name, value), "source": origin})
    return rows


def _file_keys() -> set[str]:
    path = config_file_path()
    if not path.is_file():
        return set()
    try:
        return set(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        fail(f"cannot read {path}: {exc}")


def _masked(name: str, value: Any) -> Any:
    if name in SECRET_FIELDS and value:
        return MASK
    if name == "database_url" and value:
        return re.sub(r"(://[^:/@]+:)[^@]+@", rf"\1{MASK}@", value)  # the password in user:pass@host
    return value


@config_app.command("show")
def show_command(as_json: bool = typer.Option(False, "--json")) -> None:
    """Every setting's effective value and where it came from (secrets masked)."""
    rows = effective_settings(load_settings())
    if as_json:
        print_json(rows)
        return
    console.print(f"config file: {config_file_path()}", highlight=False)
    for row in rows:
        console.print(f"{row['name']} = {row['value']!r}  [dim]({row['source']})[/]", highlight=False)


@config_app.command("path")
def path_command() -> None:
    """Where the TOML configuration file is read from (it may not exist)."""
    path = config_file_path()
    typer.echo(f"{path}{'' if path.is_file() else '  (not present)'}")
