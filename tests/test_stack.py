"""The embedded services `make run` and `make test` start when the environment has none."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import redis

# Starts the embedded Redis in its own data directory, prints its URL, then waits to be
# killed: a killed process never runs its cleanup, so its redis-server is left running.
_START_AND_WAIT = textwrap.dedent(
    """
    import time
    from config import stack
    server, url = stack._start_redis()
    print(url, flush=True)
    time.sleep(600)
    """
)


def _start(env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-c", _START_AND_WAIT], env=env, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def test_a_redis_left_running_by_a_killed_run_is_reached_at_the_url_handed_out(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "MEMDESK_DATA_DIR": str(tmp_path)}
    first, orphan_url = _start(env)
    second = None
    try:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        assert redis.Redis.from_url(orphan_url).ping()  # the orphan still serves

        second, url = _start(env)
        client = redis.Redis.from_url(url)
        assert client.ping()
        client.set("memdesk-stack-test", "reached")
        # The second start attached to the orphan rather than starting beside it.
        assert redis.Redis.from_url(orphan_url).get("memdesk-stack-test") == b"reached"
    finally:
        for process in (first, second):
            if process is not None:
                process.kill()
        with contextlib.suppress(redis.ConnectionError):  # the orphan goes with the test
            redis.Redis.from_url(orphan_url).shutdown(nosave=True)


def test_a_command_run_with_its_own_data_leaves_the_servers_of_make_run_up(
    tmp_path: Path,
) -> None:
    # `make run` keeps its embedded Redis under .data/; `make test` (and every other
    # target but the reference agent's) runs `config.stack exec` with a data directory
    # of its own, so when it stops its servers, the ones `make run` serves stay up.
    (tmp_path / "run").mkdir()
    run_env = {**os.environ, "MEMDESK_DATA_DIR": str(tmp_path / "run")}
    run_env.pop("REDIS_URL", None)
    serving, url = _start(run_env)
    try:
        exec_env = {**os.environ, "MEMDESK_DATA_DIR": str(tmp_path / "exec")}
        exec_env.pop("REDIS_URL", None)
        done = subprocess.run(
            [sys.executable, "-m", "config.stack", "exec", "--", sys.executable, "-c", "pass"],
            env=exec_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "embedded Redis" in done.stdout  # it started (and stopped) a Redis of its own
        assert redis.Redis.from_url(url).ping()  # and the one being served still answers
    finally:
        serving.kill()
        with contextlib.suppress(redis.ConnectionError):
            redis.Redis.from_url(url).shutdown(nosave=True)


def test_every_make_target_that_starts_services_uses_data_of_its_own() -> None:
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    starting = [line for line in makefile.splitlines() if "config.stack exec" in line]
    assert len(starting) >= 5
    # The reference agent drives the memdesk `make run` serves, so it shares its data.
    shared = [line for line in starting if "$(OWN_DATA)" not in line]
    assert len(shared) == 1 and "REDIS_URL=$${REDIS_URL" in shared[0]
