"""Pure scoring of one diagnosis against one `truth.json` (`score_case`), and the mean over cases (`aggregate`).

No LLM, no analyzer: the event match reads the two lines' text from the bundle and masks it with a local template.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from diagagent.diagnosis import ActionProposal, Diagnosis
from diagagent.telemetry.job import Job
from diagagent.telemetry.timestamps import parse_timestamp
from diagagent.telemetry.truth import TruthAction

if TYPE_CHECKING:
    from diagagent.telemetry import Bundle, Truth

LineKey = tuple[str, int]  # (file relative to the bundle root, 1-based line)

CALIBRATION_BINS = 5  # reliability bins of stated confidence: [0, .2), [.2, .4), ... [.8, 1]
HIGH_CONFIDENCE = 0.8  # diagnoses stated at this or more must be right at least 9 times in 10
SAME_EVENT_SECONDS = 1.0  # two lines of one template on one host less than this apart are one event
TOP_K = (1, 3, 5)
RECALL_AT = 5

# --- models ----------------------------------------------------------------------------------------------


class NodeScores(BaseModel):
    top1: float | None = None
    top3: float | None = None
    top5: float | None = None
    f1: float | None = None


class EventScores(BaseModel):
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    recall_at_1: float | None = None
    recall_at_5: float | None = None


class MetricScores(BaseModel):
    """The scored metrics, shared by one case's score and the report's means (so each is named once)."""

    category_accuracy: float | None = None
    fault_accuracy: float | None = None
    nodes: NodeScores = Field(default_factory=NodeScores)
    events: EventScores = Field(default_factory=EventScores)
    stage_accuracy: float | None = None
    iteration_accuracy: float | None = None
    iteration_within_1: float | None = None
    action_accuracy: float | None = None


class CaseHead(BaseModel):
    case: str
    set: str = ""
    fault: str | None = None  # the truth's, to group by
    category: str | None = None
    predicted_category: str | None = None
    predicted_fault: str | None = None
    predicted_nodes: list[str] = Field(default_factory=list)


class CaseScore(MetricScores, CaseHead):
    """One predictor on one case. Metric fields carry the case's value (1.0 / 0.0 for a hit or miss, a fraction
    for P/R/F1) or None when the truth does not state what the metric needs: the mean over cases is the report.
    Fields run: CaseHead's, then MetricScores', then these."""

    seconds: float | None = None  # wall time of the diagnosis alone
    llm_calls: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None  # estimated, when LLM prices are configured
    llm_submitted: bool | None = None  # the LLM agent: the model submitted a diagnosis
    llm_fallback: str | None = None  # the LLM agent: why the playbook's diagnosis stands instead
    error: str | None = None  # the predictor raised: scored as an empty diagnosis
    no_evidence: bool | None = None  # cited nothing although the truth has indicating lines (None: truth has none)
    confidence: float | None = None  # what the diagnosis stated
    correct: bool | None = None  # its fault (else its category) is the truth's; None when the truth names neither


class ReliabilityBin(BaseModel):
    low: float
    high: float
    cases: int
    confidence: float | None = None  # mean stated confidence in the bin
    accuracy: float | None = None  # share of its diagnoses that were right


class Calibration(BaseModel):
    """Stated confidence against accuracy over the cases whose truth decides right or wrong: expected calibration
    error (the case-weighted gap between confidence and accuracy per bin) and the accuracy of confident answers."""

    cases: int = 0
    ece: float | None = None
    high_confidence_cases: int = 0
    high_confidence_accuracy: float | None = None
    bins: list[ReliabilityBin] = Field(default_factory=list)


class LlmUsage(BaseModel):
    """Means per case, then totals over the cases (the cost only when LLM prices are configured)."""

    llm_calls: float | None = None
    tokens_in: float | None = None
    tokens_out: float | None = None
    tokens_in_total: int = 0
    tokens_out_total: int = 0
    cost_usd_total: float | None = None


def llm_usage(scores: Sequence[CaseScore]) -> LlmUsage:
    costs = [s.cost_usd for s in scores if s.cost_usd is not None]
    return LlmUsage(**{k: _mean(getattr(s, k) for s in scores) for k in ("llm_calls", "tokens_in", "tokens_out")},
                    tokens_in_total=sum(s.tokens_in or 0 for s in scores),
                    tokens_out_total=sum(s.tokens_out or 0 for s in scores),
                    cost_usd_total=sum(costs) if costs else None)


class ReportHead(BaseModel):
    cases: int


class Report(MetricScores, ReportHead):
    """Mean of each metric over the cases that score it (None when none does); seconds is the median."""

    seconds_per_case: float | None = None
    no_evidence: int = 0  # a count, not a mean: cases that cite nothing although the truth has indicating lines
    calibration: Calibration = Field(default_factory=Calibration)
    llm: LlmUsage | None = None  # only for an agent that reports LLM usage
    per_case: list[CaseScore] = Field(default_factory=list)


# --- the line index: what the event match needs from the bundle ---------------------------------------------

_RANK_PREFIX = re.compile(r"^\s*\[(?:rank|default)\d+\]:\s*")
_IP = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b")
_HEXISH = re.compile(r"\b(?:0x)?[0-9a-fA-F]*\d[0-9a-fA-F]*\b")
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def line_template(text: str) -> str:
    """A cheap template of a log line: the `[rankN]:` prefix dropped, IPs, hex and digits masked, spaces squeezed."""
    text = _RANK_PREFIX.sub("", text)
    text = _IP.sub("<ip>", text)
    text = _HEXISH.sub("<*>", text)
    text = _DIGITS.sub("<*>", text)
    return _SPACE.sub(" ", text).strip()


def host_of_file(rel: str) -> str | None:
    """The host folder of a bundle file (`logs/<host>/x.log`, `probes/<host>/dmesg.txt`), or None."""
    parts = rel.split("/")
    return parts[1] if len(parts) >= 3 else None


class IndexedLine(BaseModel):
    host: str | None
    ts: float | None
    template: str


class LineIndex(BaseModel):
    """The lines a scoring needs (truth and cited), read once from the bundle, and the job for eviction groups."""

    lines: dict[LineKey, IndexedLine] = Field(default_factory=dict)
    job: Job | None = None
    spans: dict[LineKey, int] = Field(default_factory=dict)  # a cited record cut over several lines: its last line

    @classmethod
    def from_bundle(cls, bundle: Bundle, refs: Iterable[LineKey]) -> LineIndex:
        wanted: dict[str, set[int]] = {}
        for file, line in refs:
            wanted.setdefault(file, set()).add(line)
        lines: dict[LineKey, IndexedLine] = {}
        for file, numbers in wanted.items():
            lines.update(_read_lines(bundle, file, numbers))
        return cls(lines=lines, job=bundle.job)


def _read_lines(bundle: Bundle, file: str, numbers: set[int]) -> dict[LineKey, IndexedLine]:
    out: dict[LineKey, IndexedLine] = {}
    last = max(numbers)
    host = host_of_file(file)
    for n, text in bundle.iter_raw_lines(file, issues=[]):
        if n in numbers:
            out[(file, n)] = IndexedLine(host=host, ts=parse_timestamp(text, bundle.year), template=line_template(text))
        if n >= last:
            break
    return out


def same_event(cited: LineKey, indicated: LineKey, index: LineIndex) -> bool:
    """The cited line is the indicated one (or a record cut over several lines that holds it), or a line of the same
    template on the same host within one second."""
    if cited == indicated or (cited[0] == indicated[0] and cited[1] <= indicated[1] <= index.spans.get(cited, 0)):
        return True
    a, b = index.lines.get(cited), index.lines.get(indicated)
    if a is None or b is None or a.host is None or a.ts is None or b.ts is None:
        return False
    return a.host == b.host and abs(a.ts - b.ts) < SAME_EVENT_SECONDS and a.template == b.template


# --- the metrics -------------------------------------------------------------------------------------------


def _unique(items: Iterable) -> list:
    return list(dict.fromkeys(items))


def set_f1(predicted: set[str], truth: set[str]) -> float:
    """F1 of two sets; two empty sets agree perfectly (1.0)."""
    if not predicted and not truth:
        return 1.0
    hits = len(predicted & truth)
    if hits == 0:
        return 0.0
    precision, recall = hits / len(predicted), hits / len(truth)
    return 2 * precision * recall / (precision + recall)


def score_nodes(ranked: Sequence[str], truth_nodes: list[str] | None) -> NodeScores:
    """top-k: a truth node among the first k ranked; f1 of the whole named set. An empty truth scores f1 only."""
    if truth_nodes is None:
        return NodeScores()
    ranked = _unique(ranked)
    truth = set(truth_nodes)
    f1 = set_f1(set(ranked), truth)
    if not truth:
        return NodeScores(f1=f1)
    hits = {k: float(bool(truth & set(ranked[:k]))) for k in TOP_K}
    return NodeScores(top1=hits[1], top3=hits[3], top5=hits[5], f1=f1)


def cited_lines(diagnosis: Diagnosis, context: Sequence[LineKey] = (), index: LineIndex | None = None) -> list[LineKey]:
    """The scored evidence, in the diagnosis's order, once each: `cause` items that point at a file and line, and
    `context` items that are the same event as a line the truth marks as context (the last activity before a
    hang); other context is shown to the operator but not scored."""
    keys = []
    for e in diagnosis.evidence:
        if not e.file or e.line is None:
            continue
        key = (e.file, e.line)
        if e.role == "cause" or (e.role == "context" and context and index is not None
                                 and any(same_event(key, t, index) for t in context)):
            keys.append(key)
    return _unique(keys)


def evidence_lines(diagnosis: Diagnosis) -> list[LineKey]:
    """Every line the diagnosis points at (any role): what the scoring's line index must read."""
    return _unique((e.file, e.line) for e in diagnosis.evidence if e.file and e.line is not None)


def _matched_share(sources: Sequence[LineKey], targets: Sequence[LineKey], index: LineIndex) -> float:
    return sum(any(same_event(s, t, index) for s in sources) for t in targets) / len(targets)


def score_events(cited: Sequence[LineKey], indicated: Sequence[LineKey] | None, index: LineIndex) -> EventScores:
    """Precision (cited lines that are an indicated event), recall (indicated events cited), their F1, and recall
    among the first five cited; recall_at_1 is 1.0 when the first cited line is an indicated event (the key line
    first). An empty citation has no precision; an empty truth has no recall."""
    if indicated is None:
        return EventScores()
    cited, indicated = _unique(cited), _unique(indicated)
    precision = sum(any(same_event(c, t, index) for t in indicated) for c in cited) / len(cited) if cited else None
    recall = _matched_share(cited, indicated, index) if indicated else None
    if precision is not None and recall is not None:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    else:
        f1 = 1.0 if not cited and not indicated else 0.0
    at_1 = float(bool(cited) and any(same_event(cited[0], t, index) for t in indicated)) if indicated else None
    at_5 = _matched_share(cited[:RECALL_AT], indicated, index) if indicated else None
    return EventScores(precision=precision, recall=recall, f1=f1, recall_at_1=at_1, recall_at_5=at_5)


def _commits_match(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    a, b = a.lower(), b.lower()
    return a.startswith(b) or b.startswith(a)


def eviction_accepted(proposed: Sequence[str], truth_nodes: Sequence[str] | None, job: Job | None) -> bool:
    """Every truth node evicted; more only within one parallel group (tp/cp/dp/pp) that holds a truth node."""
    if truth_nodes is None:
        return bool(proposed)
    chosen, truth = set(proposed), set(truth_nodes)
    if not truth <= chosen:
        return False
    extra = chosen - truth
    if not extra:
        return True
    if job is None or job.parallelism is None:
        return False
    for host in truth:
        for rank in job.host_to_ranks.get(host, []):
            for kind in ("tp", "cp", "dp", "pp"):
                if extra <= set(job.hosts_of(job.group_of(kind, rank))):
                    return True
    return False


def action_matches(proposal: ActionProposal, truth: TruthAction, job: Job | None) -> bool:
    if proposal.kind != truth.kind:
        return False
    if truth.kind == "evict":
        return eviction_accepted(proposal.nodes, truth.nodes, job)
    if truth.kind == "restart":
        return truth.from_step is None or proposal.from_step == truth.from_step
    if truth.kind == "rollback":
        return truth.to_commit is None or _commits_match(proposal.to_commit, truth.to_commit)
    return True


def score_actions(proposals: Sequence[ActionProposal], truth: list[TruthAction] | None, job: Job | None) -> float | None:
    """1.0 when every truth action is proposed (kind and target) and nothing else is; `none` is no action."""
    if truth is None:
        return None
    wanted = [t for t in truth if t.kind != "none"]
    offered = [p for p in proposals if p.kind != "none"]
    covered = all(any(action_matches(p, t, job) for p in offered) for t in wanted)
    justified = all(any(action_matches(p, t, job) for t in wanted) for p in offered)
    return float(covered and justified)


def _hit(predicted: object, truth: object) -> float | None:
    return None if truth is None else float(predicted == truth)


def diagnosis_correct(diagnosis: Diagnosis, truth: Truth) -> bool | None:
    """Right or wrong as a whole: the fault where the truth names one, else the category; None where it names
    neither. An answer of "unknown" is wrong where the truth knows: its confidence should say it is unsure."""
    if truth.fault is not None:
        return diagnosis.fault == truth.fault
    if truth.category is not None:
        return diagnosis.category == truth.category
    return None


def calibration(scores: Sequence[CaseScore], bins: int = CALIBRATION_BINS) -> Calibration:
    judged = [(s.confidence, s.correct) for s in scores if s.confidence is not None and s.correct is not None]
    if not judged:
        return Calibration()
    out, ece = [], 0.0
    for i in range(bins):
        low, high = i / bins, (i + 1) / bins
        inside = [(c, ok) for c, ok in judged if low <= c < high or (i == bins - 1 and c == 1.0)]
        if not inside:
            out.append(ReliabilityBin(low=low, high=high, cases=0))
            continue
        conf = sum(c for c, _ in inside) / len(inside)
        acc = sum(ok for _, ok in inside) / len(inside)
        ece += len(inside) / len(judged) * abs(conf - acc)
        out.append(ReliabilityBin(low=low, high=high, cases=len(inside), confidence=round(conf, 4),
                                  accuracy=round(acc, 4)))
    confident = [ok for c, ok in judged if c >= HIGH_CONFIDENCE]
    return Calibration(cases=len(judged), ece=round(ece, 4), high_confidence_cases=len(confident),
                       high_confidence_accuracy=sum(confident) / len(confident) if confident else None, bins=out)


def score_case(diagnosis: Diagnosis, truth: Truth, source: Bundle | LineIndex, case: str = "") -> CaseScore:
    """Score one diagnosis against its truth. `source` is the case's bundle or a LineIndex already read from it."""
    indicated = None if truth.indicating_lines is None else [(r.file, r.line) for r in truth.indicating_lines]
    context = [(r.file, r.line) for r in truth.indicating_lines or [] if r.role == "context"]
    index = source if isinstance(source, LineIndex) else \
        LineIndex.from_bundle(source, [*evidence_lines(diagnosis), *(indicated or [])])
    spans = {(e.file, e.line): e.end_line for e in diagnosis.evidence if e.file and e.line and e.end_line}
    if spans:
        index = index.model_copy(update={"spans": spans})
    cited = cited_lines(diagnosis, context, index)
    iteration_hit = iteration_near = None
    if truth.iteration is not None:
        iteration_hit = float(diagnosis.iteration == truth.iteration)
        iteration_near = float(diagnosis.iteration is not None and abs(diagnosis.iteration - truth.iteration) <= 1)
    return CaseScore(
        case=case or diagnosis.job_id, fault=truth.fault, category=truth.category,
        predicted_category=diagnosis.category, predicted_fault=diagnosis.fault,
        predicted_nodes=diagnosis.faulty_hosts[:5],
        category_accuracy=_hit(diagnosis.category, truth.category),
        fault_accuracy=_hit(diagnosis.fault, truth.fault),
        nodes=score_nodes(diagnosis.faulty_hosts, truth.faulty_nodes),
        events=score_events(cited, indicated, index),
        stage_accuracy=_hit(diagnosis.stage, truth.stage),
        iteration_accuracy=iteration_hit, iteration_within_1=iteration_near,
        action_accuracy=score_actions(diagnosis.proposals, truth.actions, index.job),
        no_evidence=not cited if indicated else None,
        confidence=diagnosis.confidence, correct=diagnosis_correct(diagnosis, truth),
    )


# --- aggregation -------------------------------------------------------------------------------------------


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _mean_model(model: type[BaseModel], rows: Sequence[BaseModel]) -> BaseModel:
    return model(**{name: _mean(getattr(r, name) for r in rows) for name in model.model_fields})


def aggregate(scores: Sequence[CaseScore]) -> Report:
    """Each metric's mean over the cases that score it; the median diagnosis time; mean LLM usage if any."""
    seconds = [s.seconds for s in scores if s.seconds is not None]
    llm = None
    if any(s.llm_calls is not None for s in scores):
        llm = llm_usage(scores)
    means = {name: _mean(getattr(s, name) for s in scores)
             for name in MetricScores.model_fields if name not in ("nodes", "events")}
    return Report(cases=len(scores), nodes=_mean_model(NodeScores, [s.nodes for s in scores]),
                  no_evidence=sum(bool(s.no_evidence) for s in scores), calibration=calibration(scores),
                  events=_mean_model(EventScores, [s.events for s in scores]),
                  seconds_per_case=statistics.median(seconds) if seconds else None, llm=llm, per_case=list(scores),
                  **means)


def report_json(report: Report) -> dict:
    """The report as the stable JSON dict (`llm` only when an agent reported usage)."""
    return report.model_dump(mode="json", exclude={"llm"} if report.llm is None else set())
