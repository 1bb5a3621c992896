"""The output contract: `Evidence`, `Diagnosis`, `NodeScore`, `SchemaMatch` and `ActionProposal`, the shapes
every layer reads. It imports nothing of diagagent's, so schemata and actions sit below the diagnosis logic.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Category = Literal["hardware", "network", "infrastructure", "framework", "user_code", "data"]
Stage = Literal["init", "training", "checkpoint", "eval", "shutdown"]
ActionKind = Literal["evict", "restart", "rollback", "none"]

EvidenceKind = Literal["log", "flow", "stack", "probe", "schema", "metric"]
# cause: indicates what broke (scored against truth.json indicating_lines); symptom: what followed from it
# (the cascade of watchdog timeouts on healthy peers); context: background that helps a reader.
EvidenceRole = Literal["cause", "symptom", "context"]


class Evidence(BaseModel):
    """One fact a diagnosis rests on, pointing at where it was seen."""

    id: str = Field(description="Stable within one diagnosis (e1, e2, ...); claims and proposals cite it.")
    kind: EvidenceKind
    role: EvidenceRole = "cause"
    file: str | None = None  # relative to the bundle root
    line: int | None = None  # 1-based
    end_line: int | None = None  # a record printed over several lines (cut at a terminal's width, a frame and its source
    # line, an exception and its message): its last line
    host: str | None = None
    rank: int | None = None
    text: str = ""  # the line (or a summary of the flow/stack fact), as untrusted data
    why: str = ""  # why it matters
    ts: float | None = None  # epoch seconds, where known
    score: float = 0.0

    @property
    def lines(self) -> str:
        """Its line, or its first and last line ('6-9') when it spans several."""
        return f"{self.line}-{self.end_line}" if self.end_line and self.end_line != self.line else f"{self.line}"


class NodeScore(BaseModel):
    host: str
    score: float
    reason: str = ""
    evidence: list[str] = Field(default_factory=list)


class SchemaMatch(BaseModel):
    schema_id: str
    title: str
    fault: str | None = None
    category: Category | None = None
    score: float
    similarity: float | None = None
    template_overlap: float | None = None


class ActionProposal(BaseModel):
    """What the diagnosis suggests; nothing runs until an authorized operator approves it in the Ledger."""

    kind: ActionKind
    nodes: list[str] = Field(default_factory=list)  # evict
    from_step: int | None = None  # restart
    checkpoint_path: str | None = None
    to_commit: str | None = None  # rollback
    reason: str = ""
    evidence: list[str] = Field(default_factory=list)  # Evidence ids
    warnings: list[str] = Field(default_factory=list)  # policy notes: over the spares, ...


class Candidate(BaseModel):
    """A fault the evidence points to, with how strongly (the differential's score) and why."""

    fault: str
    category: Category | None = None
    score: float = 0.0
    why: str = ""


class ConfidenceWhy(BaseModel):
    """Why the confidence is what it is: what raised it, what held it down, and the one check that would settle it."""

    basis: str = ""  # what the number is: the accuracy this kind of evidence had on the dev cases
    tier: str | None = None  # decisive|strong|weak|schema|unsure|none: what the evidence reached
    raised: list[str] = Field(default_factory=list)
    held_down: list[str] = Field(default_factory=list)
    check: str | None = None


class Diagnosis(BaseModel):
    job_id: str
    status: str | None = None
    category: Category | None = None
    fault: str | None = None
    root_cause: str = ""
    confidence: float = Field(0.0, ge=0.0, le=1.0)
    faulty_nodes: list[NodeScore] = Field(default_factory=list)  # ranked, most suspect first
    stage: Stage | None = None
    # the first abnormal iteration: the one in progress when the fault struck (last completed + 1), the first
    # NaN iteration, or the first slow one; None when the job never reached training
    iteration: int | None = None
    evidence: list[Evidence] = Field(default_factory=list)  # ranked, strongest first
    schemata: list[SchemaMatch] = Field(default_factory=list)
    proposals: list[ActionProposal] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # what could not be checked, and how to check it
    # the differential: the faults the evidence points to, best first; when `fault` is None (not sure), the check
    # that tells the two best apart
    candidates: list[Candidate] = Field(default_factory=list)
    check: str | None = None
    confidence_why: ConfidenceWhy | None = None
    # --llm was asked for and no model answered (unreachable, failing, no submission) or its submission was set aside
    # (it cited nothing valid, named hosts outside the job, contradicted decisive evidence): why; the playbook answered
    llm_unavailable: str | None = None

    @property
    def faulty_hosts(self) -> list[str]:
        return [n.host for n in self.faulty_nodes]

    def evidence_by_id(self, evidence_id: str) -> Evidence | None:
        return next((e for e in self.evidence if e.id == evidence_id), None)
