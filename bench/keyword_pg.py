"""Keyword search on PostgreSQL (full text) against the bm25s index, on an evaluation corpus.

Needs the corpus ingested into a SQLite data folder (`--home`) and the same data in PostgreSQL
(`docubot db migrate-to URL`, so the vectors are the very same). For each keyword backend, in the
`bm25` and `hybrid` modes, prints recall@5 and MRR@10 (answerable questions, first gold hit) on the
set's `tune` and `holdout` splits when it has them, and on all of it:

- `bm25s (SQLite)`: the index in the data folder, what SQLite deployments use (the baseline);
- `bm25s (PG, memory)`: the same index built in memory from PostgreSQL's chunks;
- `fulltext BM25`: PostgreSQL tsvectors (catalan/spanish/english), BM25 computed in SQL;
- `fulltext ts_rank_cd`: the same tsvectors ranked by PostgreSQL's cover density (normalisation 1).

    python bench/keyword_pg.py --home /tmp/nubelia --url postgresql://…/nubelia --set evals/nubelia
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docubot.config import Settings
from docubot.db import Database
from docubot.embed import make_embedder
from docubot.eval.metrics import mrr, recall_at
from docubot.eval.retrieval import gold_rank
from docubot.eval.sets import load_retrieval_set
from docubot.rag.fulltext import FullTextIndex, _query_lexemes
from docubot.rag.keyword import KeywordIndex, KeywordSearch
from docubot.rag.retrieve import Mode, Retriever
from docubot.store import VectorStore, open_store, validate_filters
from docubot.store.sql import _driver_rows


class CoverDensity(FullTextIndex):
    """The same tsvectors, ranked by `ts_rank_cd(tsv, query, 1)` instead of BM25."""

    def ranking(
        self, store: VectorStore, question: str, filters: dict[str, Any], depth: int
    ) -> list[tuple[str, float]]:
        indexed = self._current(store)
        with self.db.read() as conn:
            lexemes = _query_lexemes(conn, question, indexed.language)
            if not lexemes:
                return []
            where, params = "", []
            for name, values in validate_filters(filters).items():
                where += f" AND COALESCE(CAST(c.\"{name}\" AS TEXT), '') = ANY(?)"
                params.append(values)
            query = " | ".join(f"'{lexeme}'" for lexeme in lexemes)
            rows = _driver_rows(
                conn,
                "SELECT f.chunk_id, ts_rank_cd(f.tsv, CAST(? AS tsquery), 1) AS score FROM chunk_fts f "
                f"JOIN chunks c ON c.id = f.chunk_id WHERE f.tsv @@ CAST(? AS tsquery){where} "
                "ORDER BY score DESC, f.chunk_id LIMIT ?",
                [query, query, *params, depth],
            )
        return [(str(i), float(s)) for i, s in rows]


def ranks(retriever: Retriever, cases: list[Any], vectors: list[Any], mode: Mode) -> dict[str, int | None]:
    """Case id → rank of the first gold hit in the top 10 (answerable cases)."""
    out = {}
    for case, vector in zip(cases, vectors, strict=True):
        if case.answerable:
            hits = retriever.search(case.question, k=10, mode=mode, query_vector=vector).hits
            out[case.id] = gold_rank(hits, case.gold)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--set", type=Path, required=True, dest="eval_set")
    args = parser.parse_args()
    cases = load_retrieval_set(args.eval_set)
    lines = [
        json.loads(line) for line in (args.eval_set / "retrieval.jsonl").read_text().splitlines() if line
    ]
    splits: dict[str, set[str] | None] = {}
    for name in ("tune", "holdout"):
        ids = {line["id"] for line in lines if line.get("split") == name}
        if ids:
            splits[name] = ids
    splits["all"] = None
    sqlite = Settings(home=args.home, llm="none")
    postgres = sqlite.with_overrides(database_url=args.url)
    embedder = make_embedder(sqlite)
    vectors = [embedder.embed_query(case.question) for case in cases]  # once, for every backend
    with Database(sqlite) as lite, Database(postgres) as pg:
        lite_store, pg_store = open_store(lite), open_store(pg)
        backends: dict[str, tuple[VectorStore, KeywordSearch]] = {
            "bm25s (SQLite)": (lite_store, KeywordIndex(sqlite.keyword_index_dir)),
            "bm25s (PG, memory)": (pg_store, KeywordIndex(None)),
            "fulltext BM25": (pg_store, FullTextIndex(pg)),
            "fulltext ts_rank_cd": (pg_store, CoverDensity(pg)),
        }
        header = " | ".join(f"{split} R@5 | {split} MRR@10" for split in splits)
        print(f"{args.eval_set} ({len(cases)} questions)\n")
        print(f"| backend | mode | {header} | ratio to bm25s (all) |")
        print("|---|---|" + "---:|" * (2 * len(splits) + 1))
        baseline: dict[str, tuple[float, float]] = {}
        for name, (store, index) in backends.items():
            retriever = Retriever(embedder, store, index, rrf_k=sqlite.rrf_k)
            for mode in cast(list[Mode], ["bm25", "hybrid"]):
                found = ranks(retriever, cases, vectors, mode)
                cells = []
                for ids in splits.values():
                    chosen = [rank for case_id, rank in found.items() if ids is None or case_id in ids]
                    recall, reciprocal = recall_at(chosen, 5), mrr(chosen)
                    cells.append(f"{recall:.3f} | {reciprocal:.3f}")
                base = baseline.setdefault(mode, (recall, reciprocal))
                ratio = f"{recall / base[0]:.2f}× / {reciprocal / base[1]:.2f}×"
                print(f"| {name} | {mode} | {' | '.join(cells)} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
