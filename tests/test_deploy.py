"""Production settings pass `check --deploy` with no warnings."""

import os
import subprocess
import sys
from pathlib import Path


def test_check_deploy_is_clean_with_production_settings():
    # The browser tests relax Django's async guard for their own process only.
    inherited = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {
        **inherited,
        "DEBUG": "0",
        "SECRET_KEY": "x7!" + "k" * 60 + "Qz9#",
        "ALLOWED_HOSTS": "memdesk.example.com",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
