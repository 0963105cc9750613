"""What a process loads is frozen out of the garbage collector's full collections.

Measured before: about 200,000 tracked objects in a web process, 80-110 ms a full
collection, a pause every few dozen `claims:batch` requests (that endpoint's p95
fell from 173 to 73 ms in a run of that section, bench/README.md).
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What the server's entry point leaves under the collector, and what it froze.
_PROBE = """
import gc, json, sys
import config.wsgi
print(json.dumps({
    "frozen": gc.get_freeze_count(),
    "tracked": len(gc.get_objects()),
    "urlconf_loaded": "memory.claims.api.claims.views" in sys.modules,
}))
"""


def test_every_django_process_freezes_what_its_apps_loaded() -> None:
    # This process set Django up as every memdesk process does (the config app's ready()).
    assert gc.get_freeze_count() > 50_000


def test_the_web_entry_point_freezes_the_urlconf_with_the_rest() -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "1"}
    completed = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    probe = json.loads(completed.stdout.strip().splitlines()[-1])
    assert probe["urlconf_loaded"], "the views were not loaded before the freeze"
    assert probe["frozen"] > 100_000
    # Next to nothing is left for a full collection to walk.
    assert probe["tracked"] < probe["frozen"] // 20, probe
