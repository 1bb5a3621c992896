"""The diagnosis at the top of the app: a live analyzer checklist while it runs, then root cause, confidence, nodes.

Analyzer seconds are shown only while running, so a finished screen holds nothing that depends on the clock.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.widgets import Static

from diagagent.diagnosis import Diagnosis

# (analyzer, the bundle part it needs; None: always runs)
ANALYZERS: tuple[tuple[str, str | None], ...] = (
    ("logs", "logs"), ("health", "probes"), ("stacks", "stacks"), ("flows", "flows"), ("schemata", None),
)
MARKS = {"waiting": ("○", "dim"), "running": ("◐", "bold yellow"), "done": ("✓", "green"), "failed": ("✗", "red"),
         "absent": ("–", "dim")}


def confidence_style(confidence: float) -> str:
    return "bold green" if confidence >= 0.7 else "bold yellow" if confidence >= 0.4 else "bold red"


def diagnosis_text(d: Diagnosis) -> Text:
    text = Text(d.root_cause or "No root cause found.", style="bold")
    text.append("\n")
    text.append(f"{d.confidence:.0%}", confidence_style(d.confidence))
    text.append(f" sure  {d.category or 'unknown'}/{d.fault or 'unknown'}")
    if d.faulty_nodes:
        text.append("  on ")
        text.append(", ".join(n.host for n in d.faulty_nodes[:4]), "bold red")
        if len(d.faulty_nodes) > 4:
            text.append(f" +{len(d.faulty_nodes) - 4}")
    else:
        text.append("  no faulty node")
    text.append(f"  {d.stage or 'stage ?'}")
    if d.iteration is not None:
        text.append(f" iter {d.iteration}")
    return text


def confidence_why_lines(d: Diagnosis) -> list[Text]:
    """The confidence's why in two lines, each cut to the panel's width: what raised it (+) and held it down (-),
    then the one check that would settle it (empty when the diagnosis has no explanation)."""
    w = d.confidence_why
    if w is None:
        return []
    why = Text(f"why {d.confidence:.0%}:", style="bold", no_wrap=True, overflow="ellipsis")
    for mark, items, style in (("+", w.raised, "green"), ("-", w.held_down, "yellow")):
        for item in items:
            why.append(f"  {mark} ", style)
            why.append(item)
    if not (w.raised or w.held_down) and w.basis:
        why.append(f" {w.basis}")
    lines = [why]
    if w.check:
        settle = Text("to settle it: ", style="bold", no_wrap=True, overflow="ellipsis")
        settle.append(w.check)
        lines.append(settle)
    return lines


def diagnosis_view(d: Diagnosis) -> Group:
    """The finished panel: root cause and facts (`diagnosis_text`), then the confidence's why."""
    return Group(diagnosis_text(d), *confidence_why_lines(d))


class DiagnosisPanel(Static):
    """Shows analyzer progress, then the diagnosis; the app feeds it the Session's events."""

    def __init__(self, parts_present: set[str]) -> None:
        super().__init__(id="diagnosis-panel")
        self.steps: dict[str, str] = {name: "waiting" if part is None or part in parts_present else "absent"
                                      for name, part in ANALYZERS}
        self.seconds: dict[str, float] = {}
        self.tool = ""
        self.finished = False

    def on_mount(self) -> None:
        self.update(self.progress_text())

    def progress_text(self) -> Text:
        text = Text("Diagnosing ", style="bold")
        for name, state in self.steps.items():
            mark, style = MARKS[state]
            text.append(f" {mark} ", style)
            text.append(name, "dim" if state in ("waiting", "absent") else "")
            if name in self.seconds:
                text.append(f" {self.seconds[name]:.1f}s", "dim")
        text.append("\n")
        text.append(f"running {self.tool}" if self.tool else "starting", "dim italic")
        return text

    def analyzer_started(self, name: str) -> None:
        self.steps[name] = "running"
        self._refresh_progress()

    def analyzer_ended(self, name: str, seconds: float | None, ok: bool) -> None:
        self.steps[name] = "done" if ok else "failed"
        if seconds is not None:
            self.seconds[name] = seconds
        self._refresh_progress()

    def tool_started(self, tool: str) -> None:
        self.tool = tool
        self._refresh_progress()

    def _refresh_progress(self) -> None:
        if not self.finished:
            self.update(self.progress_text())

    def show(self, diagnosis: Diagnosis) -> None:
        self.finished = True
        self.set_class(True, "-ready")
        self.update(diagnosis_view(diagnosis))

    def failed(self, message: str) -> None:
        self.finished = True
        self.set_class(True, "-failed")
        self.update(Text(f"The diagnosis failed: {message}", style="bold red"))
