"""Real local servers for provider tests, on 127.0.0.1 only, stopped at the end of the test module."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from docubot.server.run import server_config


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(args: list[str], health_url: str, timeout_s: float = 180.0) -> Iterator[None]:
    """Start `python args…`, wait until `health_url` answers 200, stop it afterwards."""
    # A file, not a pipe: a pipe would fill up with the server's logs and block it.
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen([sys.executable, *args], stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                if process.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"server exited: {log.read().decode(errors='replace')[-2000:]}")
                try:
                    if httpx.get(health_url, timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError(f"server not ready after {timeout_s}s: {args}")
                time.sleep(0.5)
            yield
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


@contextmanager
def serving(app: object) -> Iterator[str]:
    """Run an ASGI app under a real uvicorn server in a thread; yields its base URL."""
    import threading

    import uvicorn

    port = free_port()
    server = uvicorn.Server(server_config(app, "127.0.0.1", port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
