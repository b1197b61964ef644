"""A tiny line chart in SVG, with no dependency: axes, ticks, labels, one polyline per series, a legend.

The course draws one chart (the token benchmark's cumulative input per turn), and the docs are
built with it, so a plotting library would be a heavy dependency for a few dozen lines of
markup. ``line_chart`` returns the SVG text; nothing is written or rendered here.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

Point = tuple[float, float]

# Distinguishable in colour and, for readers who cannot tell the colours apart, in dash pattern.
COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
DASHES = ("6 4", "", "2 3", "10 3 2 3", "", "4 2")


def nice_step(span: float, ticks: int = 5) -> float:
    """A round step (1, 2 or 5 times a power of ten) that cuts ``span`` into about ``ticks`` parts."""
    if span <= 0:
        return 1.0
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    for multiple in (1, 2, 5, 10):
        if multiple * power >= raw:
            return multiple * power
    return 10 * power


def tick_values(top: float, ticks: int = 5) -> list[float]:
    """0, step, 2·step... up to the first value at or above ``top``."""
    step = nice_step(top, ticks)
    count = max(1, math.ceil(top / step - 1e-9))
    return [round(step * i, 10) for i in range(count + 1)]


def short_number(value: float) -> str:
    """1500 → 1.5k, 2000000 → 2M: tick labels that fit beside an axis."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:g}{suffix}"
    return f"{value:g}"


def line_chart(series: dict[str, list[Point]], *, title: str = "", x_label: str = "", y_label: str = "",
               width: int = 720, height: int = 420, first_style: int = 0) -> str:
    """An SVG line chart of ``series`` (name → points), both axes starting at zero. The n-th series gets
    the colour and dash of style ``first_style + n``, so a chart of some of another's series can match it."""
    left, right, top, bottom = 78, 24, 44 if title else 20, 54
    plot_width, plot_height = width - left - right, height - top - bottom
    points = [point for line in series.values() for point in line]
    x_ticks = tick_values(max((x for x, _ in points), default=1) or 1)
    y_ticks = tick_values(max((y for _, y in points), default=1) or 1)
    x_max, y_max = x_ticks[-1], y_ticks[-1]

    def at(x: float, y: float) -> str:
        return f"{left + x / x_max * plot_width:.1f},{top + plot_height - y / y_max * plot_height:.1f}"

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
             f"<title>{escape(title or 'line chart')}</title>",
             f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>']
    if title:
        parts.append(f'<text x="{width / 2:.0f}" y="24" text-anchor="middle" font-size="15">{escape(title)}</text>')
    for value in y_ticks:  # horizontal grid lines with their labels
        y = top + plot_height - value / y_max * plot_height
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_width}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{short_number(value)}</text>')
    for value in x_ticks:
        x = left + value / x_max * plot_width
        parts.append(f'<line x1="{x:.1f}" y1="{top + plot_height}" x2="{x:.1f}" y2="{top + plot_height + 5}" stroke="black"/>')
        parts.append(f'<text x="{x:.1f}" y="{top + plot_height + 18}" text-anchor="middle">{short_number(value)}</text>')
    parts.append(f'<path d="M{left},{top} V{top + plot_height} H{left + plot_width}" fill="none" stroke="black"/>')
    if x_label:
        parts.append(f'<text x="{left + plot_width / 2:.0f}" y="{height - 12}" text-anchor="middle">{escape(x_label)}</text>')
    if y_label:
        parts.append(f'<text transform="translate(16,{top + plot_height / 2:.0f}) rotate(-90)" '
                     f'text-anchor="middle">{escape(y_label)}</text>')
    for index, (name, line) in enumerate(series.items()):
        style = first_style + index
        colour, dash = COLOURS[style % len(COLOURS)], DASHES[style % len(DASHES)]
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(f'<polyline data-series="{escape(name)}" fill="none" stroke="{colour}" stroke-width="2"{dashed} '
                     f'points="{" ".join(at(x, y) for x, y in line)}"/>')
        legend_y = top + 14 + 20 * index  # the legend sits top left, where growing curves leave room
        parts.append(f'<line x1="{left + 14}" y1="{legend_y}" x2="{left + 44}" y2="{legend_y}" '
                     f'stroke="{colour}" stroke-width="2"{dashed}/>')
        parts.append(f'<text x="{left + 50}" y="{legend_y + 4}">{escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
