"""The timeline pane: the flows' iteration times as Unicode block charts sized to the terminal's width.

One line for the whole job (each cell the slowest iteration it covers), then one row per node: compute time
against its peers in the latest iterations, so a straggler stands out. Says so plainly when there are no flows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from diagagent.apps.tui.incident import TimelineData

BARS = "▁▂▃▄▅▆▇█"
# compute gap over peers' median -> block; above the last bound: █
RATIO_BOUNDS = (0.9, 1.05, 1.15, 1.3, 1.5, 2.0, 3.0)
RATIO_LEGEND = "▁ faster  ▂ as peers  ▃ 1.1x  ▄ 1.3x  ▅ 1.5x  ▆ 2x  ▇ 3x  █ slower"
RECENT = 5  # "now": the median of a node's last iterations


def ratio_cell(ratio: float | None) -> tuple[str, str]:
    if ratio is None or math.isnan(ratio):
        return "·", "dim"
    level = next((i for i, bound in enumerate(RATIO_BOUNDS) if ratio < bound), len(RATIO_BOUNDS))
    return BARS[level], "green" if ratio < 1.15 else "yellow" if ratio < 1.5 else "bold red"


def duration_bars(values: Sequence[float], width: int) -> str:
    """Bars from 0 to twice the median (or the largest value, if more), `width` cells at most, each the slowest of
    the iterations it covers: a typical iteration fills half the height, and one twice as slow fills it all."""
    if not values or width < 1:
        return ""
    per_cell = math.ceil(len(values) / width)
    cells = [max(values[i:i + per_cell]) for i in range(0, len(values), per_cell)]
    top = max(max(cells), 2 * sorted(values)[(len(values) - 1) // 2]) or 1.0
    return "".join(BARS[min(int(v / top * len(BARS)), len(BARS) - 1)] for v in cells)


def _secs(value: float | None) -> str:
    return f"{value:.2f} s" if value is not None else "?"


class IterationChart(Widget):
    """The whole chart, redrawn to fit the width it gets."""

    DEFAULT_CSS = "IterationChart { height: auto; }"

    def __init__(self, data: TimelineData) -> None:
        super().__init__(id="iteration-chart")
        self.data = data

    def render(self) -> Text:
        return chart_text(self.data, self.size.width)


def chart_text(d: TimelineData, width: int) -> Text:
    label = max((len(h) for h in d.hosts), default=4) + 2
    cells = max(width - label - 12, 8)
    text = Text(f"Iteration time, whole job ({len(d.job_durations)} iterations; p50 {_secs(d.p50_s)}, "
                f"p95 {_secs(d.p95_s)})\n", "bold")
    bars = duration_bars(d.job_durations, cells)
    text.append(" " * label)
    text.append(bars, "cyan")
    text.append(f" max {_secs(max(d.job_durations) if d.job_durations else None)}\n", "dim")
    shown = d.iterations[-cells:]
    first = len(d.iterations) - len(shown)
    text.append(f"Compute time against peers, iterations {shown[0] if shown else '?'}-{shown[-1] if shown else '?'}"
                f" ({len(d.hosts)} of {d.hosts_total} nodes)\n", "bold")
    text.append(f"{RATIO_LEGEND}\n", "dim")
    for host, ratios in zip(d.hosts, d.ratios, strict=True):
        marked = host in d.marked
        text.append(f"{host:<{label - 1}}", "bold red" if marked else "")
        text.append("!" if marked else " ", "bold red")
        for r in ratios[first:]:
            text.append(*ratio_cell(r))
        recent = sorted(r for r in ratios[-RECENT:] if r is not None and not math.isnan(r))
        text.append(f" now {recent[len(recent) // 2]:.2f}x" if recent else "", "dim")
        text.append("\n")
    text.rstrip()
    text.no_wrap = True
    return text


class TimelinePane(VerticalScroll):
    """The flows summary and the chart, or why there is none."""

    def __init__(self) -> None:
        super().__init__(id="timeline-pane")

    def compose(self) -> ComposeResult:
        yield Static(Text("The timeline appears here once the diagnosis is ready.", style="dim"),
                     id="timeline-summary")

    async def load(self, data: TimelineData | None, note: str) -> None:
        summary = self.query_one("#timeline-summary", Static)
        await self.query(IterationChart).remove()
        if data is None:
            summary.update(Text(note))
            return
        summary.update(Text(data.summary))
        await self.mount(IterationChart(data))


__all__ = ["IterationChart", "TimelinePane", "chart_text", "duration_bars", "ratio_cell"]
