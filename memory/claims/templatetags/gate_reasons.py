"""Template filters for the review console: what a gate reason code means."""

from __future__ import annotations

from django import template

from memory.claims.gate import RULES_BY_CODE

register = template.Library()


@register.filter
def gate_rule_meaning(code: str) -> str:
    """`{{ reason|gate_rule_meaning }}`: the rule's description, for the chip's tooltip."""
    rule = RULES_BY_CODE.get(code)
    return rule.description if rule else ""
