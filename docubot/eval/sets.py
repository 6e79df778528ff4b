"""Loading the labelled sets (format: evals/README.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


class EvalSetError(Exception):
    """A labelled set is missing or malformed."""


@dataclass(frozen=True)
class Gold:
    url: str
    section: str


@dataclass(frozen=True)
class RetrievalCase:
    id: str
    question: str
    lang: str
    answerable: bool
    gold: tuple[Gold, ...]
    facts: tuple[str, ...]
    kind: str = ""
    split: str = ""
    """`tune` or `holdout` where the set is split (choose settings on `tune` only); empty otherwise."""


def retrieval_set_file(path: Path) -> Path:
    """A retrieval set's file: `path` itself when it is a `.jsonl` file, else `<path>/retrieval.jsonl`."""
    return path if path.suffix == ".jsonl" else path / "retrieval.jsonl"


def load_retrieval_set(path: Path) -> list[RetrievalCase]:
    """The cases of a retrieval set (a folder holding `retrieval.jsonl`, or a `.jsonl` file such as
    `evals/nubelia/retrieval_typos.jsonl`); a clear error names the bad line."""
    file = retrieval_set_file(path)
    cases = []
    for number, data in read_jsonl(file):
        try:
            cases.append(
                RetrievalCase(
                    id=str(data["id"]),
                    question=str(data["question"]),
                    lang=str(data.get("lang", "")),
                    answerable=bool(data["answerable"]),
                    gold=tuple(Gold(g["url"], g["section"]) for g in data.get("gold", [])),
                    facts=tuple(data.get("facts", [])),
                    kind=str(data.get("kind", "")),
                    split=str(data.get("split", "")),
                )
            )
        except (KeyError, TypeError) as exc:
            raise EvalSetError(f"{file.name} line {number}: missing or bad field {exc}") from exc
    return cases


@dataclass(frozen=True)
class DialogueTurn:
    user: str
    standalone: str
    gold: tuple[Gold, ...]
    depends_on: tuple[int, ...]


@dataclass(frozen=True)
class Dialogue:
    id: str
    turns: tuple[DialogueTurn, ...]


def load_conversation_set(folder: Path) -> list[Dialogue]:
    """`<folder>/conversations.jsonl` as dialogues; a clear error names the bad line."""
    dialogues = []
    for number, data in read_jsonl(folder / "conversations.jsonl"):
        try:
            turns = []
            for index, t in enumerate(data["turns"]):
                depends = tuple(int(d) for d in t.get("depends_on", []))
                if any(not 0 <= d < index for d in depends):
                    raise ValueError(f"turn {index} depends on a turn that is not before it: {list(depends)}")
                gold = tuple(Gold(g["url"], g["section"]) for g in t.get("gold", []))
                turns.append(DialogueTurn(str(t["user"]), str(t["standalone"]), gold, depends))
            dialogues.append(Dialogue(str(data["id"]), tuple(turns)))
        except (KeyError, TypeError, ValueError) as exc:
            raise EvalSetError(f"conversations.jsonl line {number}: missing or bad field {exc}") from exc
    return dialogues


def read_jsonl(path: Path) -> list[tuple[int, dict]]:
    if not path.exists():
        raise EvalSetError(f"labelled set not found: {path}")
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise EvalSetError(f"{path.name} line {number}: invalid JSON ({exc.msg})") from exc
    return rows
