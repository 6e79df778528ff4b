"""Copy a corpus from one store to another with its vectors: nothing is embedded again."""

from __future__ import annotations

from dataclasses import dataclass

from docubot.store.base import Record, StoreError, VectorStore

BATCH = 500


@dataclass(frozen=True)
class CopyReport:
    copied: int
    removed: int
    corpus_version: int


def copy_store(
    source: VectorStore,
    target: VectorStore,
    model: tuple[str, int],
) -> CopyReport:
    """Make `target` hold exactly `source`'s records (ids, texts, metadata, vectors) and move its corpus
    version on. `model` (name, dim) must match both stores. Raises StoreError if the counts differ after."""
    source.check_embedding_model(*model)
    target.check_embedding_model(*model)
    metadata = source.all_metadata()
    ids = sorted(metadata)
    for start in range(0, len(ids), BATCH):
        part = source.get(ids[start : start + BATCH])
        vectors = source.vectors_by_hash(str(r.metadata["content_hash"]) for r in part)
        target.upsert(
            [Record(r.id, r.text, r.metadata, vectors[str(r.metadata["content_hash"])]) for r in part]
        )
    removed = target.delete(target.list_ids() - set(ids))
    version = target.bump_corpus_version()
    if target.count() != source.count() or target.list_ids() != set(ids):
        raise StoreError(
            f"copy incomplete: the source holds {source.count()} chunks, the target {target.count()}"
        )
    return CopyReport(len(ids), removed, version)
