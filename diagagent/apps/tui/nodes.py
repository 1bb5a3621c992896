"""The nodes pane: every node with its probe verdict and whether the diagnosis names it; details of the selected one.

Hostnames, reasons and probe lines come from telemetry and are shown as plain Text.
"""

from __future__ import annotations

from rich.text import Text

from diagagent.apps.tui.incident import NodeStatus
from diagagent.apps.tui.table_pane import TablePane

VERDICT_STYLE = {"faulty": "bold red", "degraded": "yellow", "healthy": "green", "unprobed": "dim"}
MAX_SIGNALS = 8


def node_detail(n: NodeStatus) -> Text:
    text = Text.assemble((n.host, "bold"), "  probes: ", (n.verdict, VERDICT_STYLE.get(n.verdict, "")),
                         f" ({n.probe_reason})")
    if n.suspect is not None:
        text.append("\nnamed faulty", "bold red")
        text.append(f" (score {n.suspect.score:.2f}): {n.suspect.reason}")
        if n.suspect.evidence:
            text.append(f"  [evidence {', '.join(n.suspect.evidence[:6])}]", "dim")
    for s in n.signals[:MAX_SIGNALS]:
        text.append("\n")
        text.append(f"{s.file}:{s.line}", "cyan")
        text.append(f"  {s.meaning}", "italic")
        text.append(f"\n    {s.text[:300]}")
    if len(n.signals) > MAX_SIGNALS:
        text.append(f"\n… {len(n.signals) - MAX_SIGNALS} more probe lines", "dim")
    return text


class NodesPane(TablePane):
    """Node table plus the highlighted node's signals."""

    COLUMNS = ("host", "verdict", "suspect", "why")
    FLEX = "why"
    CAPS = {"host": 24}  # noqa: RUF012 - read-only
    PLACEHOLDER = "Node verdicts appear here once the diagnosis is ready."

    def __init__(self) -> None:
        super().__init__("nodes")
        self.nodes: dict[str, NodeStatus] = {}

    def load(self, nodes: tuple[NodeStatus, ...]) -> None:
        self.nodes = {n.host: n for n in nodes}
        rows = []
        for n in nodes:
            score = Text(f"{n.suspect.score:.2f}", "bold red") if n.suspect else Text("")
            why = n.suspect.reason if n.suspect else n.probe_reason
            rows.append((n.host, (Text(n.host, "bold" if n.suspect else ""),
                                  Text(n.verdict, VERDICT_STYLE.get(n.verdict, "")), score, Text(why[:160]))))
        self.set_rows(rows)

    def row_highlighted(self, key: str) -> None:
        if key in self.nodes:
            self.show_detail(node_detail(self.nodes[key]))


__all__ = ["NodesPane", "node_detail"]
