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
