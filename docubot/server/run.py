"""Running the app under uvicorn: logs that carry request ids, and a shutdown that never hangs.

On SIGTERM/SIGINT uvicorn stops accepting, lets requests in flight finish for
`SHUTDOWN_GRACE_S`, then cancels the streams still open; their answers stop at the next piece of
text (nothing half-answered is stored), so the process exits within a few seconds even under load.
"""

from __future__ import annotations

import copy
from typing import Any

import uvicorn
from uvicorn.config import LOGGING_CONFIG

SHUTDOWN_GRACE_S = 2
KEEP_ALIVE_S = 75
"""How long an idle keep-alive connection stays open. uvicorn's 5 s default made clients that reuse a
connection after a busy moment (500 concurrent streams, `bench/serve.py`) hit a closed socket."""


def server_config(app: Any, host: str, port: int, log_level: str = "info") -> uvicorn.Config:
    """The uvicorn configuration of `docubot serve` (tests run the same one)."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        log_config=_logging(log_level),
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        timeout_keep_alive=KEEP_ALIVE_S,
    )


def serve(app: Any, host: str, port: int) -> None:
    """Serve until SIGTERM/SIGINT."""
    uvicorn.Server(server_config(app, host, port)).run()


def _logging(level: str) -> dict[str, Any]:
    """uvicorn's logging, plus DocuBot's own loggers (failed requests, cache writes) on stderr."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["docubot"] = {"handlers": ["default"], "level": level.upper(), "propagate": True}
    return config
