"""Serving benchmark: `python bench/serve.py`.

1. Concurrent streaming sessions held by one server process (real uvicorn, the extractive `none`
   provider so the model does not dominate): N clients at once each create a session and stream
   one answer; time to first byte and total, p50/p95, and errors, for N = 25, 100, 200, 500 on the
   embedded SQLite default, then N = 500 on PostgreSQL as the baseline (ratio printed).
2. Turns persisted per second by the session manager on SQLite and on PostgreSQL (a throw-away
   local server), with 1 and 8 threads, same questions, same process; the ratio between backends.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docubot.config import Settings  # noqa: E402
from docubot.embed.e5 import E5Embedder  # noqa: E402
from docubot.ingest.pipeline import ingest  # noqa: E402
from docubot.rag.answer import DocuBot  # noqa: E402
from docubot.server.app import create_app  # noqa: E402
from docubot.server.users import UserStore  # noqa: E402
from docubot.sessions import SessionManager  # noqa: E402
from tests.postgres import postgres_server  # noqa: E402
from tests.servers import serving  # noqa: E402

QUESTIONS = [
    "Com exporto un informe a PDF?",
    "Com restableixo la contrasenya?",
    "Quant costa el pla Business?",
    "Com convido un membre a l'espai de treball?",
]


async def one_client(client: httpx.AsyncClient, n: int) -> tuple[float, float]:
    session = (await client.post("/v1/sessions")).json()["id"]
    start = time.perf_counter()
    first = None
    async with client.stream(
        "POST", f"/v1/sessions/{session}/messages", json={"content": QUESTIONS[n % len(QUESTIONS)]}
    ) as response:
        response.raise_for_status()
        async for _ in response.aiter_bytes():
            first = first or time.perf_counter() - start
    return first or 0.0, time.perf_counter() - start


async def wave(url: str, key: str, clients: int) -> tuple[list[float], list[float], int]:
    limits = httpx.Limits(max_connections=clients)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=300, limits=limits) as client:
        results = await asyncio.gather(
            *(one_client(client, n) for n in range(clients)), return_exceptions=True
        )
    ok = [r for r in results if isinstance(r, tuple)]
    for error in sorted({f"{type(r).__name__}: {r}"[:160] for r in results if not isinstance(r, tuple)}):
        print(f"  error: {error}")
    return [r[0] for r in ok], [r[1] for r in ok], len(results) - len(ok)


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


def streaming(settings: Settings, embedder: E5Embedder, waves: tuple[int, ...]) -> dict[int, float]:
    """Each wave's TTFB p95 in seconds, printed as a table row per wave."""
    bot = DocuBot(settings, embedder=embedder, chat_model=None)
    _, key = UserStore(bot.db).add("bench")
    app = create_app(settings, bot)
    with serving(app) as url:
        asyncio.run(wave(url, key, 5))  # warm up
        print("concurrent streams | TTFB p50 / p95 | total p50 / p95 | errors | wall")
        p95: dict[int, float] = {}
        for clients in waves:
            start = time.perf_counter()
            ttfb, total, errors = asyncio.run(wave(url, key, clients))
            wall = time.perf_counter() - start
            print(
                f"{clients:18d} | {p(ttfb, 50) * 1000:6.0f} / {p(ttfb, 95) * 1000:6.0f} ms "
                f"| {p(total, 50) * 1000:6.0f} / {p(total, 95) * 1000:6.0f} ms | {errors:6d} | {wall:5.1f} s"
            )
            p95[clients] = p(ttfb, 95)
    return p95


def persisted_per_second(settings: Settings, embedder: E5Embedder, threads: int, turns: int = 96) -> float:
    bot = DocuBot(settings, embedder=embedder, chat_model=None)
    sessions = SessionManager(settings, bot, bot.db)
    ids = [sessions.create("bench").id for _ in range(threads)]
    jobs = [(ids[n % threads], QUESTIONS[n % len(QUESTIONS)]) for n in range(turns)]
    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda job: sessions.send("bench", job[0], job[1]), jobs))
    return turns / (time.perf_counter() - start)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Settings(home=Path(tmp), llm="none", cache_enabled=False)
        embedder = E5Embedder()
        ingest(ROOT / "examples" / "docs_nubelia", base, DocuBot(base, embedder=embedder).store, embedder)
        print("SQLite (embedded default)")
        on_sqlite = streaming(base, embedder, (25, 100, 200, 500))
        with postgres_server() as pg_url:
            on_postgres = base.with_overrides(database_url=pg_url)
            store = DocuBot(on_postgres, embedder=embedder).store
            ingest(ROOT / "examples" / "docs_nubelia", on_postgres, store, embedder)
            print("PostgreSQL (baseline)")
            on_pg = streaming(on_postgres, embedder, (500,))
            print(f"500 streams, TTFB p95 SQLite/PostgreSQL x{on_sqlite[500] / on_pg[500]:.2f}")
            print("\nturns persisted per second (extractive answers: retrieval + one transaction per turn)")
            for threads in (1, 8):
                sqlite = persisted_per_second(base, embedder, threads)
                postgres = persisted_per_second(on_postgres, embedder, threads)
                print(
                    f"{threads} thread(s): SQLite {sqlite:6.1f}/s, PostgreSQL {postgres:6.1f}/s "
                    f"(PostgreSQL/SQLite x{postgres / sqlite:.2f})"
                )


if __name__ == "__main__":
    main()
