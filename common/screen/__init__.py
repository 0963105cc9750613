"""The screen every string an agent sends passes before memdesk writes it.

- `normalize`: one canonical spelling (NFKC, no invisibles, look-alikes folded).
- `decode`: payloads hidden in encoded runs or tag characters; file bytes as text.
- `strings`: every string inside a JSON-like value, keys included.
- `injection`: the scored classifier of instruction-like text.
- `secrets`: credential detectors.
"""

from common.screen.decode import text_of_file
from common.screen.injection import InjectionResult, judge_injection
from common.screen.secrets import (
    SecretFinding,
    find_secrets_in_strings,
    find_secrets_in_text,
    find_secrets_in_value,
)
from common.screen.strings import strings_in

__all__ = [
    "InjectionResult",
    "SecretFinding",
    "find_secrets_in_strings",
    "find_secrets_in_text",
    "find_secrets_in_value",
    "judge_injection",
    "strings_in",
    "text_of_file",
]
