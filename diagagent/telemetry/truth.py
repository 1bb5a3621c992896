"""`truth.json`: what really happened in an eval case. Read by the simulator's tests and the eval only.

Analyzers and the agent never read it: gold labels stay out of anything a diagnosis is made from.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from diagagent.contract import ActionKind, Category, Stage

__all__ = ["ActionKind", "Category", "LineRef", "Stage", "Truth", "TruthAction"]


class LineRef(BaseModel):
    """A line of the bundle. In truth.json, `role` says whether it shows the cause (scored as failure-indicating) or
    is context (the last activity before a hang), and real cases keep the line's `text` to check it verbatim."""

    file: str
    line: int = Field(ge=1)
    role: Literal["cause", "context"] = "cause"
    text: str | None = None


class TruthAction(BaseModel):
    model_config = ConfigDict(extra="allow")
    kind: ActionKind
    nodes: list[str] | None = None
    from_step: int | None = None
    to_commit: str | None = None


class Truth(BaseModel):
    """What really happened. Real cases (evals/real) add where it comes from and how sure the annotation is."""

    model_config = ConfigDict(extra="allow")
    source: str | None = None
    framework: str | None = None
    confidence: Literal["high", "medium", "low"] | None = None
    note: str | None = None
    faulty_ranks: list[int] | None = None
    fault: str | None = None
    category: Category | None = None
    root_cause: str | None = None
    faulty_nodes: list[str] | None = None
    stage: Stage | None = None
    iteration: int | None = None
    indicating_lines: list[LineRef] | None = None
    actions: list[TruthAction] | None = None
