"""The evidence pane: the diagnosis's cited facts in a table; the highlighted one's log lines below (or beside) it.

Lines are read off the UI thread from the bundle and shown as plain Text, the cited line marked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

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


def context_text(e: Evidence, lines: list[tuple[int, str]] | None, error: str = "") -> Text:
    """The evidence's header, why it matters, and its numbered lines with the cited one marked."""
    text = Text.assemble((e.id, "bold"), " ", (e.role, ROLE_STYLE.get(e.role, "")), f" {e.kind}  ",
                         (where(e), "cyan"))
    if e.host and e.file:
        text.append(f"  {e.host}" + (f" rank {e.rank}" if e.rank is not None else ""), "dim")
    if e.why:
        text.append(f"\nwhy: {e.why}", "italic")
    if error:
        text.append(f"\n{error}", "red")
    elif lines:
        width = len(str(lines[-1][0]))
        for n, line in lines:
            cited = n == e.line
            text.append("\n")
            text.append(f"{'>' if cited else ' '}{n:>{width}} │ ", "bold" if cited else "dim")
            text.append(line[:MAX_LINE_CHARS], "bold reverse" if cited else "")
    else:
        text.append("\n")
        text.append(e.text[:MAX_LINE_CHARS * 4])
        if not e.file:
            text.append(f"\n\n(a {e.kind} fact: no single log line to show)", "dim")
    text.no_wrap = True
    return text


class EvidencePane(TablePane):
    """Evidence table plus the context of the highlighted row."""

    COLUMNS = ("id", "role", "where", "text")
    PLACEHOLDER = "The evidence appears here once the diagnosis is ready."

    def __init__(self, read_lines: LineReader) -> None:
        super().__init__("evidence")
        self.read_lines = read_lines
        self.evidence: dict[str, Evidence] = {}

    def load(self, evidence: list[Evidence]) -> None:
        self.evidence = {e.id: e for e in evidence}
        self.table.clear()
        for e in evidence:
            self.table.add_row(Text(e.id, "bold"), Text(e.role, ROLE_STYLE.get(e.role, "")),
                               Text(where(e), "cyan"), Text(e.text[:MAX_CELL_CHARS].replace("\n", " ")), key=e.id)
        if not evidence:
            self.show_detail(Text("This diagnosis cites no evidence."))

    def row_highlighted(self, key: str) -> None:
        if key in self.evidence:
            self.show_context(self.evidence[key])

    @work(exclusive=True, group="evidence-context")
    async def show_context(self, e: Evidence) -> None:
        lines: list[tuple[int, str]] | None = None
        error = ""
        if e.file and e.line:
            try:
                context = WIDE_CONTEXT_LINES if self.screen.has_class("-wide") else CONTEXT_LINES
                lines = await asyncio.to_thread(self.read_lines, e.file, e.line, context)
            except OSError as exc:
                error = f"cannot read {e.file}: {exc.strerror or exc}"
        self.show_detail(context_text(e, lines, error))


__all__ = ["EvidencePane", "context_text"]
