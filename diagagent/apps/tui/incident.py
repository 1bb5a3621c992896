"""What the TUI shows about one incident, gathered off the UI thread: diagnosis, node verdicts, timeline, actions.

Plain data with no Textual in it: `gather` runs in a worker thread once `Session.diagnose()` is done.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from diagagent.diagnosis import Diagnosis, NodeScore

if TYPE_CHECKING:
    from diagagent.actions import Ledger, LedgerEntry
    from diagagent.agent import Session
    from diagagent.analysis.flows import FlowFindings
    from diagagent.analysis.health import HealthFindings
    from diagagent.telemetry.job import Job

VERDICT_ORDER = {"faulty": 0, "degraded": 1, "healthy": 2, "unprobed": 3}
TIMELINE_NODES = 10  # node rows in the chart (faulty and suspect nodes first)
TIMELINE_CELLS = 400  # node rows x iterations (the flows' own cap); 40 iterations for 10 nodes
JOB_ITERATIONS = 400  # the job-wide iteration line covers at most this many (the flows' own cap)


@dataclass(frozen=True)
class Signal:
    """One probe line behind a node's verdict."""

    file: str
    line: int
    text: str
    meaning: str
    severity: str


@dataclass(frozen=True)
class NodeStatus:
    """A node as the Nodes pane lists it: its probe verdict and, when the diagnosis names it, why."""

    host: str
    verdict: str  # faulty | degraded | healthy | unprobed
    probe_reason: str
    suspect: NodeScore | None
    signals: tuple[Signal, ...] = ()


@dataclass(frozen=True)
class TimelineData:
    """The flows' iteration timeline: job-wide iteration times, and each shown node's compute time vs its peers."""

    summary: str
    p50_s: float | None
    p95_s: float | None
    job_iterations: tuple[int, ...]
    job_durations: tuple[float, ...]
    hosts: tuple[str, ...]
    iterations: tuple[int, ...]
    ratios: tuple[tuple[float | None, ...], ...]  # per host, per iteration: compute gap / its peers' median
    marked: frozenset[str]  # named faulty or flagged as stragglers
    hosts_total: int


@dataclass(frozen=True)
class Incident:
    diagnosis: Diagnosis
    nodes: tuple[NodeStatus, ...]
    timeline: TimelineData | None
    timeline_note: str  # why there is no chart, in plain words
    actions: tuple[LedgerEntry, ...]
    ledger_note: str = ""  # set when the proposals could not be recorded


def node_statuses(job: Job, health: HealthFindings | None, diagnosis: Diagnosis, *,
                  probes_present: bool) -> list[NodeStatus]:
    """Every job node (and any probed host outside job.yaml): suspects first, then by verdict, then job order."""
    suspects = {n.host: n for n in diagnosis.faulty_nodes}
    probed = {n.host: n for n in health.nodes} if health is not None else {}
    if not probes_present:
        missing = "no probes in this bundle"
    elif health is None:
        missing = "the health analyzer failed (see the diagnosis notes)"
    else:
        missing = "no probe output for this node"
    hosts = list(dict.fromkeys([*job.hosts, *probed]))
    out = []
    for host in hosts:
        h = probed.get(host)
        signals = tuple(Signal(s.file, s.line, s.text, s.meaning, s.severity) for s in h.signals) if h else ()
        out.append(NodeStatus(host, h.verdict if h else "unprobed", h.reason if h else missing,
                              suspects.get(host), signals))
    suspect_rank = {h: i for i, h in enumerate(suspects)}
    job_rank = {h: i for i, h in enumerate(hosts)}
    out.sort(key=lambda n: (suspect_rank.get(n.host, len(suspect_rank)), VERDICT_ORDER.get(n.verdict, 9),
                            job_rank[n.host]))
    return out


def timeline_data(flows: FlowFindings | None, diagnosis: Diagnosis, *,
                  flows_present: bool) -> tuple[TimelineData | None, str]:
    """The chart's data, or None and why not ("no flows in this bundle", ...)."""
    if not flows_present:
        return None, "no flows in this bundle: the iteration timeline comes from network flow records"
    if flows is None:
        return None, "the flows analyzer failed (see the diagnosis notes)"
    if not flows.has_flows:
        return None, flows.note or "no flows of this job in the bundle"
    from diagagent.analysis.flows import timeline

    k = flows.iterations.count
    hosts = flows.hosts
    if not k or not hosts:
        return None, flows.summary or "no iterations could be cut from the flows"
    stragglers = {s.host for s in flows.stragglers if s.flagged}
    first = [h for h in diagnosis.faulty_hosts if h in hosts] + [s.host for s in flows.suspects]
    chosen = list(dict.fromkeys([*first, *hosts]))[:TIMELINE_NODES]
    job_view = timeline(flows, nodes=hosts[:1], iterations=range(-min(k, JOB_ITERATIONS), 0))
    per_node = max(TIMELINE_CELLS // len(chosen), 1)
    view = timeline(flows, nodes=chosen, iterations=range(-min(k, per_node), 0))
    if not view.nodes:
        return None, view.shown or flows.summary
    spans = [s for s in job_view.spans if s.duration_s is not None]
    data = TimelineData(
        summary=flows.summary,
        p50_s=view.p50_s,
        p95_s=view.p95_s,
        job_iterations=tuple(s.iteration for s in spans),
        job_durations=tuple(s.duration_s for s in spans),
        hosts=tuple(row.host for row in view.nodes),
        iterations=tuple(c.iteration for c in view.nodes[0].iterations),
        ratios=tuple(tuple(c.compute_vs_peers for c in row.iterations) for row in view.nodes),
        marked=frozenset(stragglers | set(diagnosis.faulty_hosts)),
        hosts_total=len(hosts),
    )
    return data, ""


def submit_proposals(ledger: Ledger, diagnosis: Diagnosis, job: Job, proposer: str) -> list[LedgerEntry]:
    """Record the diagnosis's proposals as pending (idempotent) and return all of this job's entries."""
    for proposal in diagnosis.proposals:
        if proposal.kind != "none":
            ledger.submit(diagnosis.job_id, proposal, proposer, job=job, evidence=diagnosis.evidence)
    return ledger.list(job_id=diagnosis.job_id)


def gather(session: Session, ledger: Ledger, proposer: str) -> Incident:
    """Diagnose (if not yet done) and collect everything the panes show; blocking, so call it off the UI thread."""
    import sqlite3

    from diagagent.actions import LedgerError

    diagnosis = session.diagnose()
    bundle, analyses = session.bundle, session.ctx.analyses
    nodes = node_statuses(bundle.job, analyses.health, diagnosis, probes_present=bundle.has("probes"))
    chart, why_not = timeline_data(analyses.flows, diagnosis, flows_present=bundle.has("flows"))
    try:
        actions, note = submit_proposals(ledger, diagnosis, bundle.job, proposer), ""
    except (LedgerError, sqlite3.Error, OSError) as exc:
        actions, note = [], f"the proposals could not be recorded in the ledger: {exc}"
    return Incident(diagnosis, tuple(nodes), chart, why_not, tuple(actions), note)


def refresh_actions(ledger: Ledger, job_id: str) -> tuple[LedgerEntry, ...]:
    return tuple(ledger.list(job_id=job_id))


__all__ = ["Incident", "NodeStatus", "Signal", "TimelineData", "gather", "node_statuses", "refresh_actions",
           "submit_proposals", "timeline_data"]
