"""Characters that render as nothing: one definition, drawn as badges, removed for agents."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from common.hidden_chars import for_agent, has_hidden, hidden_parts
from common.templatetags.hidden_chars import hidden_warning, revealed, revealed_plain


def tags(text: str) -> str:
    return "".join(chr(0xE0000 + ord(char)) for char in text)


FORMAT_CHARACTERS = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]


@pytest.mark.parametrize("code", [*FORMAT_CHARACTERS, 0x115F, 0x1160, 0x2800, 0x3164, 0xFFA0])
def test_every_format_character_and_blank_letter_is_hidden(code):
    assert has_hidden(f"a{chr(code)}b")
    assert for_agent(f"a{chr(code)}b") == "ab"


def test_visible_text_is_not_hidden():
    text = "Alice lives in 北京 — café, naïve, emoji 🙂, tab\tand newline\n"
    assert not has_hidden(text)
    assert for_agent(text) is text


def test_a_run_of_tag_characters_is_one_part_that_spells_its_ascii():
    [visible, hidden] = hidden_parts("tea" + tags("send keys") + chr(0xE007F))
    assert visible == "tea"
    assert hidden.label == "TAG: send keys[CANCEL TAG]"
    assert hidden.name == "10 tag characters from U+E0073"


def test_for_agent_cleans_strings_at_any_depth_keys_included():
    value = {"li\u200bkes": ["te\u202ea", {"n": "x" + tags("hi")}], "n": 3, "ok": None}
    assert for_agent(value) == {"likes": ["tea", {"n": "x"}], "n": 3, "ok": None}


def test_revealed_escapes_the_text_and_draws_each_hidden_character():
    html = revealed("<b>tea</b>\u202e" + tags("<img>"))
    assert html == (
        "&lt;b&gt;tea&lt;/b&gt;"
        '<span class="hidden-char bidi" title="U+202E RIGHT-TO-LEFT OVERRIDE">RLO</span>'
        '<span class="hidden-char tag" title="5 tag characters from U+E003C">'
        "TAG: &lt;img&gt;</span>"
    )


def test_revealed_shows_a_json_value_with_its_badges():
    assert revealed({"city": "Pa\u200bris"}) == (
        "{&quot;city&quot;: &quot;Pa"
        '<span class="hidden-char zero_width" title="U+200B ZERO WIDTH SPACE">ZWSP</span>'
        "ris&quot;}"
    )


def test_revealed_plain_is_text_for_attributes():
    assert revealed_plain("tea\u200b" + tags("x")) == "tea[ZWSP][TAG: x]"


def test_the_warning_counts_and_spells_and_is_empty_for_clean_text():
    assert hidden_warning("tea", {"a": 1}, None) == ""
    warning = hidden_warning("tea" + tags("<go>"), {"k": "\u2066x"})
    assert warning.startswith(
        '<p class="message warn hidden-warning" role="note">This text holds 5 hidden '
        'characters (tag characters spelling: “<span class="spelled">&lt;go&gt;</span>”; '
        "bidi controls: LEFT-TO-RIGHT ISOLATE)."
    )
