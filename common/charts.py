"""Small server-side SVG charts (the dashboard, a skill's cost curve): no JavaScript, no CDN,
readable as text.

Every chart has a title, a value axis with ticks at round numbers and a name
saying what is counted, so a reader never has to guess the scale, and a table
of its numbers behind a disclosure (for screen readers and for anyone who
wants the figures). Only geometry goes into attributes; colours and fonts come
from memdesk.css (`.chart`), since the Content-Security-Policy refuses inline
style. The stylesheet never draws a chart narrower than 370 px, so 14-unit
labels stay at least 12 px: on a phone the chart scrolls inside its frame
instead of shrinking its text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

# The width is close to a dashboard card's; the stylesheet keeps 14-unit labels >= 12 px.
WIDTH = 420
BAR_HEIGHT = 18
GAP = 6
LABEL_WIDTH = 180
LABEL_CHARS = 22
# Room under the plot for tick labels and the axis name.
AXIS_HEIGHT = 40
VALUE_ROOM = 64
# A two-line bar label: "what · why", the second line this many units under the first.
LABEL_SEPARATOR = " · "
LINE_HEIGHT = 16
# Up to this many columns, every one is labelled.
FEW_COLUMNS = 8

Formatter = Callable[[float], str]


def plain(value: float) -> str:
    """Integers as integers, other values with at most two decimals."""
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}".rstrip("0")


def percent(value: float) -> str:
    """A share (0 to 1) as a percentage."""
    return f"{value * 100:.1f} %".replace(".0 %", " %")


def milliseconds(value: float) -> str:
    """Seconds shown as milliseconds, the scale agents' recovery answers live at."""
    return f"{value * 1000:.0f} ms" if value < 10 else f"{value:.1f} s"


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 or 10 times a power of ten that is at least `value`."""
    if value <= 0:
        return 1
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power + 1e-12:
            return step * power
    return 10 * power


def integer_ceiling(value: float) -> int:
    """For counts: a top whose half is a whole number too (2, 4, 6, 8, 10, 20, 40…), so
    every tick of a count axis is an integer."""
    if value <= 2:
        return 2
    power = 10 ** math.floor(math.log10(value))
    for step in (2, 4, 6, 8, 10):
        if value <= step * power:
            return int(step * power)
    return int(10 * power)


def _top(values: Sequence[int | float]) -> float:
    """The axis top: an integer one when every value is a whole number (a count)."""
    largest = max(values)
    if all(float(value).is_integer() for value in values):
        return integer_ceiling(largest)
    return nice_ceiling(largest)


def _label_lines(label: str) -> str:
    """A bar's label as SVG text: "what · why" on two lines, each cut to fit its room."""
    first, _, second = label.partition(LABEL_SEPARATOR)
    if not second:
        return escape(_short(label))
    return (
        f'{escape(_short(first))}<tspan x="0" dy="{LINE_HEIGHT}">{escape(_short(second))}</tspan>'
    )


def _short(label: str) -> str:
    """Cut a label that would run under its bar; the full one is in the bar's tooltip."""
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def _open(title: str, height: int) -> list[str]:
    # The frame scrolls when the screen is narrower than the chart, so it takes focus
    # (a keyboard can scroll it) and carries the chart's name.
    return [
        f"<figcaption>{escape(title)}</figcaption>",
        f'<div class="chart-frame" tabindex="0" role="group" aria-label="{escape(title)}">'
        f'<svg class="chart" role="img" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>",
    ]


def _numbers(title: str, axis: str, rows: Sequence[tuple[str, str]], label: str) -> str:
    """The chart's figures as a table, behind a disclosure under it."""
    body = "".join(
        f'<tr><th scope="row">{escape(name)}</th><td>{escape(value)}</td></tr>'
        for name, value in rows
    )
    return (
        '<details class="chart-data"><summary>The numbers</summary>'
        f'<table class="figures"><caption class="visually-hidden">{escape(title)}</caption>'
        f'<thead><tr><th scope="col">{escape(label)}</th><th scope="col">{escape(axis)}</th>'
        f"</tr></thead><tbody>{body}</tbody></table></details>"
    )


def bar_chart(
    *,
    title: str,
    bars: Sequence[tuple[str, int | float]],
    axis: str = "count",
    fmt: Formatter = plain,
) -> SafeString:
    """Horizontal bars with their labels and values over a value axis named `axis`."""
    if not bars:
        return format_html('<p class="muted">{}: nothing recorded yet.</p>', title)
    top = _top([value for _, value in bars])
    plot = WIDTH - LABEL_WIDTH - VALUE_ROOM
    # A label "what · why" is drawn on two lines, each room for LABEL_CHARS characters.
    two_lines = any(LABEL_SEPARATOR in label for label, _ in bars)
    row = BAR_HEIGHT + GAP + (LINE_HEIGHT if two_lines else 0)
    rows = len(bars) * row + GAP
    parts = _open(title, rows + AXIS_HEIGHT)
    for index, (label, value) in enumerate(bars):
        y = GAP + index * row
        length = plot * (value / top)
        parts.append(
            f'<text x="0" y="{y + BAR_HEIGHT - 5}">{_label_lines(label)}</text>'
            f'<rect class="bar" x="{LABEL_WIDTH}" y="{y}" width="{length:.1f}" '
            f'height="{BAR_HEIGHT}" rx="3"><title>{escape(label)}: {escape(fmt(value))}</title>'
            f'</rect><text x="{LABEL_WIDTH + length + 6:.1f}" y="{y + BAR_HEIGHT - 5}">'
            f"{escape(fmt(value))}</text>"
        )
    parts.append(
        f'<line class="axis" x1="{LABEL_WIDTH}" y1="{rows}" x2="{LABEL_WIDTH + plot}" y2="{rows}"/>'
    )
    for share, anchor in ((0, "start"), (0.5, "middle"), (1, "end")):
        x = LABEL_WIDTH + plot * share
        parts.append(
            f'<line class="axis" x1="{x:.1f}" y1="{rows}" x2="{x:.1f}" y2="{rows + 4}"/>'
            f'<text class="tick" x="{x:.1f}" y="{rows + 16}" text-anchor="{anchor}">'
            f"{escape(fmt(top * share))}</text>"
        )
    parts.append(
        f'<text class="axis-name" x="{LABEL_WIDTH + plot / 2:.1f}" y="{rows + 34}" '
        f'text-anchor="middle">{escape(axis)}</text></svg></div>'
    )
    parts.append(_numbers(title, axis, [(label, fmt(value)) for label, value in bars], "what"))
    return mark_safe("".join(parts))  # noqa: S308 - every label is escaped above


def column_chart(
    *,
    title: str,
    points: Sequence[tuple[str, int | float]],
    axis: str = "count",
    across: str = "day",
    fmt: Formatter = plain,
    top: float | None = None,
) -> SafeString:
    """Columns, one per point (a day, a version), over an axis named `across`, with a value
    axis named `axis` in one unit; `top` fixes the scale (a share's is 1)."""
    if not points or not any(value for _, value in points):
        return format_html('<p class="muted">{}: nothing recorded yet.</p>', title)
    top = top or _top([value for _, value in points])
    # Room left of the plot for the widest value label ("100 %" needs more than "8").
    widest = max(len(fmt(top * share)) for share in (0, 0.5, 1))
    left, height, above = max(44, 12 + 9 * widest), 180, 22
    bottom = height - AXIS_HEIGHT + 8
    plot_height = bottom - above
    step = (WIDTH - left) / len(points)
    parts = _open(title, height)
    parts.append(f'<text class="axis-name" x="0" y="12">{escape(axis)}</text>')
    for share in (0, 0.5, 1):
        y = bottom - plot_height * share
        parts.append(
            f'<line class="grid" x1="{left}" y1="{y:.1f}" x2="{WIDTH}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
            f"{escape(fmt(top * share))}</text>"
        )
    for index, (label, value) in enumerate(points):
        column = plot_height * (value / top)
        x = left + index * step + 2
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{bottom - column:.1f}" '
            f'width="{step - 4:.1f}" height="{column:.1f}" rx="2">'
            f"<title>{escape(label)}: {escape(fmt(value))}</title></rect>"
        )
    # A few columns (versions) each get their label under them; many (days) get the first,
    # the middle and the last, so labels never collide.
    if len(points) <= FEW_COLUMNS:
        labelled = [(index, "middle") for index in range(len(points))]
    else:
        labelled = [(0, "start"), (len(points) // 2, "middle"), (len(points) - 1, "end")]
    for index, anchor in labelled:
        x = (
            left
            + index * step
            + (0 if anchor == "start" else step if anchor == "end" else step / 2)
        )
        parts.append(
            f'<text class="tick" x="{x:.1f}" y="{bottom + 18}" text-anchor="{anchor}">'
            f"{escape(points[index][0])}</text>"
        )
    parts.append(
        f'<text class="axis-name" x="{left + (WIDTH - left) / 2:.1f}" y="{height - 2}" '
        f'text-anchor="middle">{escape(across)}</text></svg></div>'
    )
    rows = [(label, fmt(value)) for label, value in points]
    parts.append(_numbers(title, axis, rows, across))
    return mark_safe("".join(parts))  # noqa: S308 - every label is escaped above
