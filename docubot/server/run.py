"""Running the app under uvicorn: logs that carry request ids, a shutdown that never hangs, and
several worker processes.

On SIGTERM/SIGINT uvicorn stops accepting, lets requests in flight finish for
`SHUTDOWN_GRACE_S`, then cancels the streams still open; their answers stop at the next piece of
text (nothing half-answered is stored), so the process exits within a few seconds even under load.

With `workers` > 1 uvicorn's supervisor starts that many processes on one listening socket (and
replaces one that dies); each builds its own app from the environment and config file through
`worker_app`, the factory named by `APP_FACTORY`. They share only the database: sessions, users,
the call log, caches and the corpus version live there, so any worker can serve any request.
"""

from __future__ import annotations

import copy
from typing import Any

import uvicorn
from fastapi import FastAPI
from uvicorn.config import LOGGING_CONFIG
from uvicorn.supervisors import Multiprocess

from docubot.config import Settings
from docubot.db import Database, journal_mode
from docubot.server.app import create_app

SHUTDOWN_GRACE_S = 2
KEEP_ALIVE_S = 75
"""How long an idle keep-alive connection stays open. uvicorn's 5 s default made clients that reuse a
connection after a busy moment (500 concurrent streams, `bench/serve.py`) hit a closed socket."""


APP_FACTORY = "docubot.server.run:worker_app"
"""What each worker process imports and calls to build its app."""


class WorkersError(ValueError):
    """This deployment cannot be served by several processes; the message says why and what to do."""


def server_config(
    app: Any, host: str, port: int, log_level: str = "info", workers: int = 1
) -> uvicorn.Config:
    """The uvicorn configuration of `docubot serve` (tests run the same one). `app`: the app, or with
    several workers the factory's import string."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        log_config=_logging(log_level),
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        timeout_keep_alive=KEEP_ALIVE_S,
        workers=workers,
        factory=isinstance(app, str),
    )


def serve(app: Any, host: str, port: int, workers: int = 1) -> None:
    """Serve until SIGTERM/SIGINT, in this process or (`workers` > 1) in that many."""
    config = server_config(app, host, port, workers=workers)
    if workers > 1:
        Multiprocess(config, sockets=[config.bind_socket()]).run()
    else:
        uvicorn.Server(config).run()


def worker_app() -> FastAPI:
    """The app of one worker process: the deployment the environment and config file describe."""
    return create_app(Settings())


def prepare_workers(settings: Settings) -> str:
    """Check that `settings` can be served by several processes and migrate the database once
    (not in every worker at the same moment); returns the app factory for uvicorn.

    PostgreSQL: always. SQLite: when the file is in WAL mode, which lets processes on one machine
    read while one writes (writes queue behind `BEGIN IMMEDIATE` for up to 30 s); a file system
    that refuses WAL (some network file systems) is refused. Embedded Chroma: refused, its folder
    is not safe for several processes (use a Chroma server, `DOCUBOT_CHROMA_URL`)."""
    if settings.vector_store == "chroma" and not settings.chroma_url:
        raise WorkersError(
            "--workers needs a vector store several processes can share: embedded Chroma "
            f"({settings.chroma_dir}) is for one process; set DOCUBOT_CHROMA_URL to a Chroma server, "
            "use the database (DOCUBOT_VECTOR_STORE=sqlite) or serve with one worker"
        )
    with Database(settings) as db:
        mode = journal_mode(db)
    if db.is_sqlite and mode != "wal":
        raise WorkersError(
            f"--workers needs SQLite in WAL mode, and {db.url} is in '{mode}' mode (the file "
            "system refused WAL: a network file system?); serve with one worker, or use PostgreSQL "
            "(DOCUBOT_DATABASE_URL=postgresql://…)"
        )
    return APP_FACTORY


def _logging(level: str) -> dict[str, Any]:
    """uvicorn's logging, plus DocuBot's own loggers (failed requests, cache writes) on stderr."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["docubot"] = {"handlers": ["default"], "level": level.upper(), "propagate": True}
    return config
