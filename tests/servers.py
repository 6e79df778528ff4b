"""Real local servers for provider tests, on 127.0.0.1 only, stopped at the end of the test module."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

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


ROOT = Path(__file__).resolve().parents[1]
CLI = ["-c", "from docubot.cli import main; main()"]
"""`python -c …`: the command line of this checkout (the `docubot` script may belong to another)."""


def docubot_env(home: Path, **settings: str) -> dict[str, str]:
    """This process's environment without its DOCUBOT_* variables, plus `DOCUBOT_HOME=home`, no
    config file, this checkout on the path, and `settings` (`llm="none"` → `DOCUBOT_LLM=none`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCUBOT_")}
    env.update(
        PYTHONPATH=str(ROOT),
        DOCUBOT_HOME=str(home),
        DOCUBOT_CONFIG=str(home / "no-such-config.toml"),
        **{f"DOCUBOT_{name.upper()}": value for name, value in settings.items()},
    )
    return env


class DocuBotServer:
    """`docubot serve` in a process group of its own, with its own environment and log file."""

    def __init__(self, env: dict[str, str], log: Path, workers: int = 1) -> None:
        self.env = env
        self.log = log
        self.workers = workers
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> DocuBotServer:
        args = ["serve", "--port", str(self.port), "--workers", str(self.workers)]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, *CLI, *args],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its workers too can be stopped as one group
            )
        return self

    def wait_ready(self, timeout_s: float = 240.0) -> None:
        """Until /v1/health answers 200; the log's tail in the error if the process exits first."""
        assert self.process is not None
        deadline = time.monotonic() + timeout_s
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_tail()}")
            try:
                if httpx.get(self.url + "/v1/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"server not ready after {timeout_s}s: {self.log_tail()}")
            time.sleep(0.5)

    def kill(self) -> None:
        """SIGKILL, as a crash would: no shutdown code runs."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=20)

    def stop(self, timeout_s: float = 20.0) -> int | None:
        """SIGTERM and wait; then SIGKILL whatever of its group is left. Returns the exit code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        return self.process.returncode

    def log_tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""
