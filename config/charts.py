"""Small server-side SVG charts for the dashboard: no JavaScript, no CDN, readable as text.

Only geometry goes into attributes; colours and fonts come from memdesk.css
(`.chart`), since the Content-Security-Policy refuses inline style.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

# The width is close to a dashboard card's, so 13px labels stay about 13px on screen.
WIDTH = 420
BAR_HEIGHT = 18
GAP = 6
LABEL_WIDTH = 180
LABEL_CHARS = 24


def _short(label: str) -> str:
    """Cut a label that would run under its bar; the full one is in the bar's tooltip."""
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def _caption(title: str) -> str:
    return f"<figcaption>{escape(title)}</figcaption>"


def bar_chart(*, title: str, bars: Sequence[tuple[str, int | float]]) -> SafeString:
    """Horizontal bars with their labels and values; an empty series says so."""
    if not bars:
        return format_html('<p class="muted">{}: nothing recorded yet.</p>', title)
    top = max(value for _, value in bars) or 1
    height = len(bars) * (BAR_HEIGHT + GAP) + GAP
    parts = [
        _caption(title),
        f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {height}" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>',
    ]
    for index, (label, value) in enumerate(bars):
        y = GAP + index * (BAR_HEIGHT + GAP)
        length = (WIDTH - LABEL_WIDTH - 60) * (value / top)
        parts.append(
            f'<text x="0" y="{y + BAR_HEIGHT - 5}">{escape(_short(label))}</text>'
            f'<rect class="bar" x="{LABEL_WIDTH}" y="{y}" width="{length:.1f}" '
            f'height="{BAR_HEIGHT}" rx="3"><title>{escape(label)}: {value}</title></rect>'
            f'<text x="{LABEL_WIDTH + length + 6:.1f}" y="{y + BAR_HEIGHT - 5}">{value}</text>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every label is escaped above


def column_chart(*, title: str, points: Sequence[tuple[str, int | float]]) -> SafeString:
    """Columns over time (one per day), labelled at both ends."""
    if not points or not any(value for _, value in points):
        return format_html('<p class="muted">{}: nothing recorded yet.</p>', title)
    top = max(value for _, value in points) or 1
    height, bottom = 160, 20
    step = WIDTH / len(points)
    parts = [
        _caption(title),
        f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {height}" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>',
    ]
    for index, (label, value) in enumerate(points):
        column = (height - bottom - 14) * (value / top)
        x = index * step + 2
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{height - bottom - column:.1f}" '
            f'width="{step - 4:.1f}" height="{column:.1f}" rx="2">'
            f"<title>{escape(label)}: {value}</title></rect>"
        )
    parts.append(f'<text x="0" y="{height - 4}">{escape(points[0][0])}</text>')
    parts.append(
        f'<text x="{WIDTH}" y="{height - 4}" text-anchor="end">{escape(points[-1][0])}</text>'
    )
    parts.append(f'<text x="0" y="12">max {top}</text></svg>')
    return mark_safe("".join(parts))  # noqa: S308 - every label is escaped above
