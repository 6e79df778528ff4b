"""Scale-out benchmark: `python bench/scaleout.py [--answers 300] [--clients 16] [--streams 1000]`.

Real `docubot serve` processes on one PostgreSQL (the embedded server of `docubot db start`) holding
the sample corpus, each with its own data folder, extractive answers (`DOCUBOT_LLM=none`), answer
caches off (every answer is computed: retrieval, the extractive answer, a call-log write).

1. Answering throughput (`POST /v1/ask`, `--clients` clients each sending requests back to back):
   one server process (the baseline), two server processes on two ports (clients split between
   them), one server with `--workers 2`; answers per second and the ratio to the baseline.
2. `--streams` concurrent SSE streams (bench/serve.py's client: each creates a session and streams
   one answer) on one server (the baseline), then split across the two servers: time to first
   byte p50/p95, total, errors.

Prints the machine's cores and load average: on a shared machine the ratios say more than the rates.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from serve import QUESTIONS, p, wave  # noqa: E402  (bench/serve.py's client)

from docubot.config import Settings  # noqa: E402
from docubot.db import Database  # noqa: E402
from docubot.embed.e5 import E5Embedder  # noqa: E402
from docubot.ingest.pipeline import ingest  # noqa: E402
from docubot.server.users import UserStore  # noqa: E402
from docubot.store import open_store  # noqa: E402
from tests.postgres import postgres_server  # noqa: E402
from tests.servers import DocuBotServer, docubot_env  # noqa: E402


def machine() -> str:
    one, five, _ = os.getloadavg()
    return f"{os.cpu_count()} cores, load average {one:.1f} (1 min) / {five:.1f} (5 min)"


async def throughput(urls: list[str], key: str, answers: int, clients: int) -> tuple[float, int]:
    """(answers per second, errors) for `answers` requests from `clients` clients, client i on urls[i % n]."""
    remaining = iter(range(answers))
    errors = 0

    async def client(i: int) -> None:
        nonlocal errors
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(base_url=urls[i % len(urls)], headers=headers, timeout=300) as http:
            for n in remaining:
                response = await http.post("/v1/ask", json={"question": QUESTIONS[n % len(QUESTIONS)]})
                errors += response.status_code != 200

    started = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    return answers / (time.perf_counter() - started), errors


def measure(name: str, urls: list[str], key: str, args: argparse.Namespace, baseline: float | None) -> float:
    asyncio.run(throughput(urls, key, 4 * args.clients, args.clients))  # warm: models, pools, plans
    rate, errors = asyncio.run(throughput(urls, key, args.answers, args.clients))
    ratio = f"  x{rate / baseline:.2f} the baseline" if baseline else "  (baseline)"
    print(f"  {name:<34} {rate:6.1f} answers/s  errors {errors}{ratio}   [{machine()}]", flush=True)
    return rate


def streams(name: str, urls: list[str], key: str, total: int) -> None:
    async def run() -> list[tuple[list[float], list[float], int]]:
        share = total // len(urls)
        return await asyncio.gather(*(wave(url, key, share) for url in urls))

    started = time.perf_counter()
    results = asyncio.run(run())
    wall = time.perf_counter() - started
    ttfb = [t for r in results for t in r[0]]
    totals = [t for r in results for t in r[1]]
    errors = sum(r[2] for r in results)
    print(
        f"  {name:<34} TTFB p50 {p(ttfb, 50):5.1f} / p95 {p(ttfb, 95):5.1f} s, total p50 {p(totals, 50):5.1f} "
        f"/ p95 {p(totals, 95):5.1f} s, errors {errors}, wall {wall:5.1f} s   [{machine()}]",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--answers", type=int, default=300)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--streams", type=int, default=1000)
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the servers inherit it
    print(f"machine: {machine()}; open files limit {hard}")
    with tempfile.TemporaryDirectory(prefix="scaleout-") as tmp, postgres_server() as url:
        folder = Path(tmp)
        settings = Settings(home=folder / "ingest", database_url=url, llm="none")
        with Database(settings) as db:
            ingest(ROOT / "examples" / "docs_nubelia", settings, open_store(db), E5Embedder())
            _, key = UserStore(db).add("bench")

        def server(name: str, workers: int = 1) -> DocuBotServer:
            env = docubot_env(folder / name, llm="none", database_url=url, cache_enabled="false")
            return DocuBotServer(env, folder / f"{name}.log", workers).start()

        started: list[DocuBotServer] = []
        try:
            a, b = server("a"), server("b")
            started += [a, b]
            for s in (a, b):
                s.wait_ready()
            print(f"\nanswering throughput: POST /v1/ask, {args.answers} answers, {args.clients} clients")
            one = measure("1 server process", [a.url], key, args, None)
            measure("2 server processes, 2 ports", [a.url, b.url], key, args, one)
            print(f"\n{args.streams} concurrent SSE streams (a session and one streamed answer each)")
            streams("1 server process", [a.url], key, args.streams)
            streams("2 server processes, 2 ports", [a.url, b.url], key, args.streams)
            for s in (a, b):
                s.stop()
            workers = server("w", workers=2)
            started.append(workers)
            workers.wait_ready()
            print("\nanswering throughput, one address")
            measure("1 server, --workers 2", [workers.url], key, args, one)
        finally:
            for s in started:
                s.stop()


if __name__ == "__main__":
    main()
