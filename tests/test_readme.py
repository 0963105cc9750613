"""The documented configuration is the settings' configuration: neither may drift from the other."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text()
# Every way the settings and the stack read an environment variable.
READS = re.compile(
    r'(?:env_int|env_bool|env_list|env_float|os\.environ\.get|getenv)\(\s*"([A-Z][A-Z0-9_]+)"'
)


def _variables_read() -> set[str]:
    sources = [ROOT / "config" / "settings.py", ROOT / "config" / "stack.py"]
    return {name for path in sources for name in READS.findall(path.read_text())}


def _configuration_table() -> set[str]:
    section = CONFIGURATION.split("# Configuration", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])}


def test_every_variable_the_settings_read_is_documented():
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", CONFIGURATION))
    assert _variables_read() - documented == set()


def test_every_variable_in_the_configuration_table_is_read_by_the_settings():
    assert _configuration_table() - _variables_read() == set()


def test_the_check_reads_the_real_files():
    # A regex that matched nothing would make both tests above pass vacuously.
    assert {"DATABASE_POOL_MAX_SIZE", "PORT", "MEMDESK_EMBEDDER"} <= _variables_read()
    assert {"DATABASE_URL", "REDIS_URL", "MEMDESK_DATA_DIR"} <= _configuration_table()
