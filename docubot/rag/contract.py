"""The answer contract `{categoria, resposta, fonts, confianca}` and defensive parsing of model output."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from docubot.rag.prompt import REFUSAL_TEXT, Fragment

Confidence = Literal["alta", "mitjana", "baixa"]


class Answer(BaseModel):
    """What DocuBot returns. `fonts` are urls taken from chunk metadata, never from the model."""

    categoria: str
    resposta: str = Field(min_length=1)
    fonts: list[str]
    confianca: Confidence


class Quote(BaseModel):
    """A sentence the model says it copied from fragment `fragment` (0: it did not say which)."""

    fragment: int = 0
    cita: str

    @field_validator("fragment", mode="before")
    @classmethod
    def _number(cls, value: object) -> object:
        return _fragment_number(value) or 0


class ModelOutput(BaseModel):
    """What the model is asked to write: verbatim quotes (`evidencia`) first, then the answer.

    `evidencia` is None when the reply has no such field (a model or recording that follows the
    older contract, citing fragment numbers in `fonts`)."""

    evidencia: list[Quote] | None = None
    resposta: str = Field(min_length=1)
    fonts: list[int] = Field(default_factory=list)
    confianca: Confidence

    @field_validator("evidencia", mode="before")
    @classmethod
    def _quotes(cls, value: object) -> object:
        """Accept bare strings as quotes without a fragment number."""
        if isinstance(value, list):
            return [{"cita": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("fonts", mode="before")
    @classmethod
    def _numbers(cls, value: object) -> object:
        """Accept "2", "[2]" or "Fragment 2" as 2: small models write any of these."""
        if isinstance(value, list):
            return [_fragment_number(v) for v in value if _fragment_number(v) is not None]
        return value


class ContractError(ValueError):
    """Model output that is not the contract; the message says what was wrong, for a retry."""


def parse_model_output(text: str) -> ModelOutput:
    """The contract from raw model text: tolerates code fences and prose around the JSON."""
    candidate = json_object(text)
    if candidate is None:
        raise ContractError("the reply contains no JSON object")
    try:
        data = json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise ContractError(f"invalid JSON: {exc.msg} at character {exc.pos}") from exc
    if not isinstance(data, dict):
        raise ContractError("the JSON is not an object")
    try:
        output = ModelOutput.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ContractError(f"the JSON does not follow the contract: {problems}") from exc
    return output


def refusal() -> Answer:
    return Answer(categoria="altres", resposta=REFUSAL_TEXT, fonts=[], confianca="baixa")


def is_refusal_text(text: str) -> bool:
    return _normalise(REFUSAL_TEXT) in _normalise(text)


def sources_for(numbers: Sequence[int], fragments: Sequence[Fragment]) -> tuple[list[str], list[int]]:
    """Sorted urls of the cited fragments and the valid numbers; no valid number → all shown urls."""
    valid = sorted({n for n in numbers if 1 <= n <= len(fragments)})
    cited = valid or list(range(1, len(fragments) + 1))
    return sorted({fragments[n - 1].url for n in cited}), valid


def _fragment_number(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    match = re.search(r"\d+", str(value))
    return int(match.group()) if match else None


def json_object(text: str) -> str | None:
    """The first balanced {...} in `text`, skipping braces inside strings."""
    start = text.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start : i + 1]
        start = text.find("{", start + 1)
    return None


def _normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())
