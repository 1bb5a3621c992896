"""`truth.json`: what really happened in an eval case. Read by the simulator's tests and the eval only.

Analyzers and the agent never read it: gold labels stay out of anything a diagnosis is made from.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Category = Literal["hardware", "network", "infrastructure", "framework", "user_code", "data"]
Stage = Literal["init", "training", "checkpoint", "eval", "shutdown"]
ActionKind = Literal["evict", "restart", "rollback", "none"]


class LineRef(BaseModel):
    file: str
    line: int = Field(ge=1)


class TruthAction(BaseModel):
    model_config = ConfigDict(extra="allow")
    kind: ActionKind
    nodes: list[str] | None = None
    from_step: int | None = None
    to_commit: str | None = None


class Truth(BaseModel):
    model_config = ConfigDict(extra="allow")
    fault: str | None = None
    category: Category | None = None
    root_cause: str | None = None
    faulty_nodes: list[str] | None = None
    stage: Stage | None = None
    iteration: int | None = None
    indicating_lines: list[LineRef] | None = None
    actions: list[TruthAction] | None = None
