"""Settings: `DOCUBOT_*` environment variables, then an optional TOML file, then defaults.

The TOML file is `$DOCUBOT_CONFIG` when set, else `<home>/config.toml` when it exists. Keys are the
field names below without the prefix (`llm = "none"`, `top_k = 6`).

The data folder defaults to the platform's user data folder and the model folder to its user cache
folder (platformdirs; on Linux `~/.local/share/docubot` and `~/.cache/docubot/models`), so every
`docubot` command finds the same store and the same model wherever it is run from.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_cache_dir, user_data_dir
from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

DEFAULT_HOME = Path(user_data_dir("docubot", appauthor=False))
DEFAULT_MODELS_DIR = Path(user_cache_dir("docubot", appauthor=False)) / "models"


def config_file_path() -> Path:
    """Where the optional TOML configuration file is looked for."""
    explicit = os.environ.get("DOCUBOT_CONFIG")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("DOCUBOT_HOME", DEFAULT_HOME)) / "config.toml"


class Settings(BaseSettings):
    """Everything DocuBot can be told, with the embedded offline defaults."""

    model_config = SettingsConfigDict(env_prefix="DOCUBOT_", extra="ignore")

    home: Path = Field(DEFAULT_HOME, description="Data folder: the SQLite store, keyword index, calibration.")
    models_dir: Path = Field(
        DEFAULT_MODELS_DIR, description="Where the assembled GGUF lives (shared by every data folder)."
    )

    # Embeddings
    embedder: Literal["e5", "openai"] = "e5"
    embed_model: str = "text-embedding-3-small"
    embed_base_url: str = "https://api.openai.com/v1"
    embed_api_key: str | None = None
    embed_query_prefix: str = ""
    embed_passage_prefix: str = ""
    embed_send_input_type: bool = False
    embed_batch_size: int = Field(32, ge=1)

    # Vector store (chunks and their vectors)
    vector_store: Literal["sqlite", "chroma"] = Field(
        "sqlite", description="sqlite: the data folder's database; chroma: a Chroma folder or server."
    )
    chroma_path: Path | None = Field(None, description="Embedded Chroma's folder (default <home>/chroma).")
    chroma_url: str | None = Field(None, description="A Chroma server, e.g. http://127.0.0.1:8000.")

    # Chunking and ingestion
    chunk_tokens: int = Field(300, ge=64, description="Target size of a chunk, breadcrumb included.")
    chunk_overlap_tokens: int = Field(60, ge=0)
    max_file_bytes: int = Field(2_000_000, ge=1, description="Larger markdown files are refused.")
    purge_guard_ratio: float = Field(0.5, gt=0, le=1)

    # Retrieval and answering
    top_k: int = Field(4, ge=1, le=50)
    retrieval_mode: Literal["dense", "bm25", "hybrid"] = "hybrid"
    fusion: Literal["zscore", "rrf"] = Field(
        "zscore", description="Hybrid: z-scored similarity and BM25 (measured: README), or reciprocal rank."
    )
    fusion_dense_weight: float = Field(0.5, ge=0, le=1, description="The dense share of the zscore fusion.")
    rrf_k: int = Field(5, ge=1, description="Reciprocal-rank-fusion constant (fusion = rrf).")
    refusal_threshold: float | None = Field(None, description="Override of the per-model calibrated floor.")
    max_question_chars: int = Field(2000, ge=10)
    focused_context: bool = Field(
        True, description="Prune the fragments shown to the model to what answers (docs/answering.md)."
    )
    context_tokens: int = Field(
        900, ge=64, description="Cap on the documentation shown to the model, with focused context."
    )
    translate_queries: bool = Field(
        True,
        description="Translate a question asked in another language than the docs' into theirs "
        "for retrieval (one short chat-model call; three for an English question with the embedded "
        "model, which also translates it through Spanish; docs/answering.md).",
    )
    answer_from: Literal["auto", "model", "extract"] = Field(
        "auto",
        description="`extract`: the answer is the docs' own passages (the `none` provider's), the "
        "chat model only translating questions and extracts; `model`: the chat model writes it; "
        "`auto`: `extract` with the embedded local model, `model` with openai/anthropic "
        "(docs/answering.md).",
    )

    # Chat model
    llm: Literal["local", "openai", "anthropic", "none"] = "local"
    llm_model: str | None = None
    llm_base_url: str = "https://api.openai.com/v1"
    llm_api_key: str | None = None
    llm_json_mode: Literal["json_schema", "json_object", "none"] = "json_schema"
    llm_timeout_s: float = Field(600.0, gt=0)
    llm_retries: int = Field(3, ge=1, description="Attempts on transient provider errors.")
    llm_backoff_s: float = Field(1.0, ge=0, description="First backoff wait; doubles, with jitter.")
    temperature: float = Field(0.1, ge=0, le=2)
    max_answer_tokens: int = Field(350, ge=16)
    context_window: int = Field(4096, ge=512)
    threads: int | None = Field(None, description="CPU threads for the local models (default: all cores).")
    # The database: chunks and vectors, call log, sessions, users, answer caches (the SQLite file of
    # `home` unless a database URL is given)
    database_url: str | None = Field(
        None, description="postgresql://user:pass@host/db instead of the data folder's SQLite file."
    )
    session_ttl_days: float = Field(30, gt=0, description="Idle sessions are hard-deleted after this.")
    # PostgreSQL + pgvector (docs/storage.md): exact search below this many chunks, HNSW above
    pg_hnsw_min_rows: int = Field(20_000, ge=0, description="Chunks from which an HNSW index is built.")
    pg_ef_search: int = Field(200, ge=1, le=1000, description="HNSW candidate list per query (recall/speed).")
    pg_hnsw_m: int = Field(32, ge=2, le=100, description="HNSW links per node, when the index is built.")
    pg_hnsw_ef_construction: int = Field(
        128, ge=4, le=1000, description="HNSW build candidate list, when the index is built."
    )
    pg_index_memory_mb: int = Field(
        512, ge=64, description="maintenance_work_mem of the HNSW build (1M 384-d chunks: ≈ 3,500)."
    )
    keyword_index: Literal["bm25s", "fulltext"] = Field(
        "bm25s", description="Keyword search: bm25s, or PostgreSQL's full text (PostgreSQL only)."
    )
    synonyms: Path | None = Field(
        None,
        description="A synonyms file read instead of the rules ingest stored (docs' words for the users').",
    )

    # Answer caches
    cache_enabled: bool = True
    cache_ttl_s: float = Field(7 * 24 * 3600, gt=0)
    cache_similarity: float | None = Field(
        None, description="Override of the calibrated semantic-cache threshold."
    )

    # HTTP server
    docs_dir: Path | None = Field(None, description="The docs folder `POST /v1/ingest` re-ingests.")
    max_request_bytes: int = Field(64_000, ge=1024, description="Larger request bodies get 413.")
    docs_base_url: str | None = Field(
        None,
        pattern=r"^https?://\S+$",
        description="Where the docs are published: the web page links each source to this + its url.",
    )

    categories: list[str] = Field(
        default_factory=lambda: [
            "compte",
            "seguretat",
            "facturacio",
            "tasques",
            "informes",
            "integracions",
            "api",
            "altres",
        ]
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = TomlConfigSettingsSource(settings_cls, toml_file=config_file_path())
        return (init_settings, env_settings, toml)

    @property
    def db_path(self) -> Path:
        """The one SQLite file holding chunks, vectors, the call log and caches."""
        return self.home / "docubot.db"

    @property
    def chroma_dir(self) -> Path:
        return self.chroma_path or self.home / "chroma"

    @property
    def keyword_index_dir(self) -> Path:
        return self.home / "bm25"

    def cpu_threads(self) -> int:
        return self.threads or os.cpu_count() or 1

    def with_overrides(self, **changes: Any) -> Settings:
        """A copy with some fields replaced (CLI flags), validated again."""
        data = self.model_dump()
        data.update({k: v for k, v in changes.items() if v is not None})
        return Settings.model_validate(data)
