"""What a report shows, gathered once for both formats: the diagnosis, cited lines in context, the pictures.

Everything from telemetry stays plain text here; the HTML and Markdown writers escape it for their format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from diagagent.contract import ActionProposal, Evidence
from diagagent.diagnosis import Diagnosis
from diagagent.telemetry import Bundle, Job

if TYPE_CHECKING:
    from diagagent.actions import LedgerEntry
    from diagagent.analysis.stacks import StackCluster
    from diagagent.apps.report.figures import Picture
    from diagagent.diagnosis.analyses import Analyses

CONTEXT_LINES = 3  # lines shown before and after a cited line
MAX_SNIPPETS = 40  # evidence items shown with their context; the rest show the cited text only
MAX_LINE_CHARS = 400  # a context line longer than this is cut
MAX_TEXT_CHARS = 2000  # an evidence text longer than this is cut
FRAMES_SHOWN = 6  # innermost frames shown per stack cluster
NOT_RECORDED = (
    "Not recorded in the Ledger when this report was written: nothing here has run. A proposal runs only once "
    "it is recorded (diagagent diagnose, without --no-submit) and an authorized operator approves it."
)
FOOTNOTE = "Text from telemetry is shown as data, exactly as it was logged."
SCHEMA_HEADER = ["schema", "title", "fault", "category", "score", "similarity", "template overlap"]
PART_MEANING = {
    "logs": "no logs: no log events, no event timeline",
    "flows": "no network flows: no iteration heatmap, stragglers or slow links",
    "stacks": "no stack dumps: no stack clusters or eviction set",
    "probes": "no health probes: node hardware was not checked",
}


@dataclass(frozen=True)
class Snippet:
    """A cited line with the lines around it, as read from the bundle."""

    file: str
    cited: int
    lines: list[tuple[int, str]]

    def numbered(self) -> list[tuple[str, str, bool]]:
        """(gutter, text, is the cited line) per line; the gutter is the line number, ▶ at the cited one."""
        width = len(str(self.lines[-1][0])) if self.lines else 1
        return [
            (f"{'▶' if n == self.cited else ' '}{n:>{width}}  ", t, n == self.cited) for n, t in self.lines
        ]


@dataclass(frozen=True)
class LedgerState:
    """A proposal's entry in the Ledger when the report was written: its id, state, and who decided and why."""

    entry_id: int
    state: str
    decided: str = ""  # "by alice: dcgmi confirms", for a decided entry

    @property
    def label(self) -> str:
        return f"#{self.entry_id} {self.state}" + (f" {self.decided}" if self.decided else "")


def ledger_states(entries: Sequence[LedgerEntry | None]) -> list[LedgerState | None]:
    """The report's view of each proposal's ledger entry (None: not in the ledger)."""
    out: list[LedgerState | None] = []
    for e in entries:
        if e is None:
            out.append(None)
            continue
        decided = ""
        if e.decided_by:
            decided = f"by {e.decided_by}" + (f": {e.decision_reason}" if e.decision_reason else "")
        out.append(LedgerState(entry_id=e.id, state=e.state, decided=decided))
    return out


def ledger_banner(states: list[LedgerState | None], at: str) -> str:
    """What the Ledger said of the proposals at `at`: how many wait for approval (and how), how many were decided."""
    known = [s for s in states if s is not None]
    if not known:
        return NOT_RECORDED
    counts: dict[str, int] = {}
    for s in known:
        counts[s.state] = counts.get(s.state, 0) + 1
    said = ", ".join(f"{n} {state}" for state, n in counts.items())
    text = f"Ledger state at {at}: {said}."
    pending = [s.entry_id for s in known if s.state == "pending"]
    if pending:
        text += (" A pending action runs only after an authorized operator approves it (diagagent actions approve "
                 f"{pending[0]}); diagagent actions show ID says exactly what it would run.")
    if len(known) < len(states):
        text += f" {len(states) - len(known)} proposal(s) were not recorded in the Ledger."
    return text


@dataclass
class ReportData:
    """Everything one report shows, in plain (unescaped) text and PNG bytes."""

    diagnosis: Diagnosis
    job: Job
    generated_at: datetime
    snippets: dict[str, Snippet]  # evidence id -> its line in context
    pictures: list[Picture]
    clusters: list[StackCluster] = field(default_factory=list)
    eviction: str = ""
    not_checked: list[str] = field(default_factory=list)  # missing bundle parts, analyzer and report notes
    ledger: list[LedgerState | None] = field(default_factory=list)  # per proposal, its entry when written

    @property
    def title(self) -> str:
        status = self.diagnosis.status or self.job.status
        return f"Job {self.diagnosis.job_id} ({status}): diagnosis report"


def gather(diagnosis: Diagnosis, bundle: Bundle, analyses: Analyses,
           entries: Sequence[LedgerEntry | None] = ()) -> ReportData:
    """Read the cited lines and draw the pictures; notes say what was missing or could not be read. `entries`: each
    proposal's Ledger entry as it is now (None, or too few: not recorded)."""
    from diagagent.apps.report.figures import pictures

    notes = [PART_MEANING[p] for p in bundle.missing]
    snippets, snippet_notes = evidence_snippets(bundle, diagnosis.evidence)
    drawn = pictures(diagnosis, analyses)
    stacks = analyses.stacks
    eviction = stacks.eviction.reasoning if stacks is not None and stacks.eviction is not None else ""
    analyzer_notes = [n for n in analyses.notes if n not in diagnosis.notes]
    return ReportData(
        diagnosis=diagnosis,
        job=bundle.job,
        generated_at=datetime.now(UTC),
        snippets=snippets,
        pictures=drawn,
        clusters=list(stacks.clusters) if stacks is not None else [],
        eviction=eviction,
        not_checked=notes + analyzer_notes + snippet_notes,
        ledger=ledger_states([*entries, *[None] * (len(diagnosis.proposals) - len(entries))][: len(diagnosis.proposals)]),
    )


def evidence_snippets(bundle: Bundle, evidence: list[Evidence]) -> tuple[dict[str, Snippet], list[str]]:
    """Each cited file line with CONTEXT_LINES around it, for up to MAX_SNIPPETS evidence items."""
    out: dict[str, Snippet] = {}
    unreadable: list[str] = []
    cited = [e for e in evidence if e.file and e.line]
    for e in cited[:MAX_SNIPPETS]:
        assert e.file is not None and e.line is not None
        lines = bundle.lines_around(e.file, e.line, CONTEXT_LINES)
        if any(n == e.line for n, _ in lines):
            out[e.id] = Snippet(e.file, e.line, [(n, clip(t, MAX_LINE_CHARS)) for n, t in lines])
        else:
            unreadable.append(f"{e.id} ({e.file}:{e.line})")
    notes = []
    if unreadable:
        notes.append(f"cited line(s) not found in the bundle, shown without context: {', '.join(unreadable)}")
    if len(cited) > MAX_SNIPPETS:
        notes.append(
            f"{len(cited) - MAX_SNIPPETS} evidence item(s) past the first {MAX_SNIPPETS} are shown "
            "without their surrounding lines"
        )
    return out, notes


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how much was cut."""
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} more characters]"


def where(e: Evidence) -> str:
    """`file:line`, the file, or the host the evidence points at."""
    if e.file and e.line:
        return f"{e.file}:{e.lines}"
    return e.file or e.host or ""


def located(e: Evidence) -> list[str]:
    """On which host and rank, and when, an evidence item was seen: short phrases, the known ones only."""
    phrases = [f"host {e.host}" if e.host else "", f"rank {e.rank}" if e.rank is not None else ""]
    return [p for p in [*phrases, when(e.ts) if e.ts is not None else ""] if p]


def when(ts: float | datetime | None) -> str:
    """A time as `YYYY-MM-DD HH:MM:SS UTC`, or "?"."""
    if ts is None:
        return "?"
    moment = ts if isinstance(ts, datetime) else datetime.fromtimestamp(ts, UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def job_span(job: Job) -> str:
    """When the job ran, as far as job.yaml says."""
    if job.started_at is None and job.ended_at is None:
        return "start and end not recorded"
    if job.ended_at is None:
        return f"started {when(job.started_at)} (end not recorded)"
    if job.started_at is None:
        return f"ended {when(job.ended_at)} (start not recorded)"
    return f"ran {when(job.started_at)} to {when(job.ended_at)}"


def about(job: Job) -> str:
    """The job in one line: id and name, framework, size, when."""
    name = f"job {job.job_id}" + (f" ({job.name})" if job.name else "")
    return " · ".join([name, job.framework, f"{len(job.nodes)} node(s)", job_span(job)])


def target(p: ActionProposal) -> str:
    """What a proposal acts on, in words."""
    if p.kind == "evict":
        return ", ".join(p.nodes)
    if p.kind == "restart":
        return f"step {p.from_step}" + (f" ({p.checkpoint_path})" if p.checkpoint_path else "")
    if p.kind == "rollback":
        return p.to_commit or ""
    return ""


def cluster_frames(cluster: StackCluster) -> str:
    """A stack cluster's innermost FRAMES_SHOWN frames, one per line, innermost first."""
    frames = [
        f"{f.function} ({f.file}{':' + str(f.line) if f.line else ''})" for f in cluster.stack[:FRAMES_SHOWN]
    ]
    if len(cluster.stack) > FRAMES_SHOWN:
        frames.append(f"… {len(cluster.stack) - FRAMES_SHOWN} more frame(s)")
    return "\n".join(frames)


def short_list(items: list[str], limit: int = 8) -> str:
    """The first `limit` items and how many more."""
    return ", ".join(items[:limit]) + (f" (+{len(items) - limit})" if len(items) > limit else "")


def schema_rows(d: Diagnosis) -> list[list[str]]:
    """The matched schemata as plain-text table rows under SCHEMA_HEADER."""
    return [
        [
            s.schema_id,
            s.title,
            s.fault or "",
            s.category or "",
            score(s.score),
            score(s.similarity),
            score(s.template_overlap),
        ]
        for s in d.schemata
    ]


def score(x: float | None) -> str:
    """A score with two decimals, or a dash when unknown."""
    return f"{x:.2f}" if x is not None else "–"


def summary_fields(d: Diagnosis) -> list[tuple[str, str]]:
    """The headline facts as (label, value)."""
    return [
        ("category", d.category or "?"),
        ("fault", d.fault or "?"),
        ("confidence", f"{d.confidence:.0%}"),
        ("stage", d.stage or "?"),
        ("iteration", str(d.iteration) if d.iteration is not None else "?"),
        *([("why that confidence", confidence_text(d))] if d.confidence_why is not None else []),
        *([("LLM", f"unavailable, offline playbook answer: {d.llm_unavailable}")] if d.llm_unavailable else []),
    ]


def confidence_text(d: Diagnosis) -> str:
    """The confidence's why in one paragraph: its basis, what raised it, what held it down, the check."""
    w = d.confidence_why
    if w is None:
        return ""
    parts = [w.basis] if w.basis else []
    if w.raised:
        parts.append("raised by: " + "; ".join(w.raised))
    if w.held_down:
        parts.append("held down by: " + "; ".join(w.held_down))
    if w.check:
        parts.append(f"to settle it: {w.check}")
    return ". ".join(parts)
