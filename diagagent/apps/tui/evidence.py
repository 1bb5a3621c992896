"""The evidence pane: the diagnosis's cited facts in a table; the highlighted one's log lines below (or beside) it.

Lines are read off the UI thread from the bundle and shown as plain Text, the cited line marked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rich.cells import chop_cells
from rich.text import Text
from textual import work

from diagagent.apps.tui.table_pane import TablePane
from diagagent.diagnosis import Evidence

CONTEXT_LINES = 3  # either side of the cited line (below the table)
WIDE_CONTEXT_LINES = 12  # beside the table, on a wide screen
MAX_LINE_CHARS = 400
MAX_CELL_CHARS = 160
ROLE_STYLE = {"cause": "bold red", "symptom": "yellow", "context": "dim"}
LineReader = Callable[[str, int, int], list[tuple[int, str]]]


def where(e: Evidence) -> str:
    if e.file and e.line:
        return f"{e.file}:{e.lines}"
    return e.file or e.host or e.kind


def context_text(e: Evidence, lines: list[tuple[int, str]] | None, error: str = "", width: int = 0) -> Text:
    """The evidence's header, why it matters, and its numbered lines with the cited one marked.

    With a `width`, a long log line wraps under its gutter (never cut at the pane's edge), so it reads whole.
    """
    text = Text.assemble((e.id, "bold"), " ", (e.role, ROLE_STYLE.get(e.role, "")), f" {e.kind}  ",
                         (where(e), "cyan"))
    if e.host and e.file:
        text.append(f"  {e.host}" + (f" rank {e.rank}" if e.rank is not None else ""), "dim")
    if e.why:
        text.append(f"\nwhy: {e.why}", "italic")
    if error:
        text.append(f"\n{error}", "red")
    elif lines:
        digits = len(str(lines[-1][0]))
        room = width - digits - 4  # '>' + number + ' │ '
        for n, line in lines:
            cited = n == e.line
            line = line[:MAX_LINE_CHARS].expandtabs(4)
            parts = chop_cells(line, room) if room >= 10 and line else [line]
            for i, part in enumerate(parts):
                text.append("\n")
                gutter = f"{'>' if cited else ' '}{n:>{digits}} │ " if i == 0 else f"{' ' * (digits + 1)} ┆ "
                text.append(gutter, "bold" if cited else "dim")
                text.append(part, "bold reverse" if cited else "")
    else:
        text.append("\n")
        text.append(e.text[:MAX_LINE_CHARS * 4])
        if not e.file:
            text.append(f"\n\n(a {e.kind} fact: no single log line to show)", "dim")
    return text


class EvidencePane(TablePane):
    """Evidence table plus the context of the highlighted row."""

    COLUMNS = ("id", "role", "where", "text")
    FLEX = "text"
    CAPS = {"id": 5, "role": 8, "where": 26}  # noqa: RUF012 - read-only
    KEEP_END = frozenset({"where"})
    PLACEHOLDER = "The evidence appears here once the diagnosis is ready."

    def __init__(self, read_lines: LineReader) -> None:
        super().__init__("evidence")
        self.read_lines = read_lines
        self.evidence: dict[str, Evidence] = {}
        self.shown: Evidence | None = None

    def load(self, evidence: list[Evidence]) -> None:
        self.evidence = {e.id: e for e in evidence}
        self.set_rows([(e.id, (Text(e.id, "bold"), Text(e.role, ROLE_STYLE.get(e.role, "")),
                               Text(where(e), "cyan"), Text(e.text[:MAX_CELL_CHARS]))) for e in evidence])
        if not evidence:
            self.show_detail(Text("This diagnosis cites no evidence."))

    def row_highlighted(self, key: str) -> None:
        if key in self.evidence:
            self.show_context(self.evidence[key])

    def relayout_detail(self) -> None:
        if self.shown is not None:
            self.show_context(self.shown)

    @work(exclusive=True, group="evidence-context")
    async def show_context(self, e: Evidence) -> None:
        self.shown = e
        lines: list[tuple[int, str]] | None = None
        error = ""
        if e.file and e.line:
            try:
                context = WIDE_CONTEXT_LINES if self.screen.has_class("-wide") else CONTEXT_LINES
                lines = await asyncio.to_thread(self.read_lines, e.file, e.line, context)
            except OSError as exc:
                error = f"cannot read {e.file}: {exc.strerror or exc}"
        self.show_detail(context_text(e, lines, error, self.detail_width))


__all__ = ["EvidencePane", "context_text"]
