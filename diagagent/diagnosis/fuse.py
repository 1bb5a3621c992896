"""`diagnose(bundle)`: fuse the four analyzers' findings and the matched schemata into one cited Diagnosis.

Nodes are ranked by a noisy-OR of each analyzer's vote; the cause's lines come first, the cascade is a symptom;
the fault is a differential diagnosis (signatures weighed by strength, the best schema one input among them) that
may say "not sure"; the proposals follow docs/conventions.md.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from diagagent.analysis.events import NOT_FINITE, LogFindings, LogLocation
from diagagent.analysis.logparse import line_kind, split_header, stage_of_frames, stage_of_words
from diagagent.config import Settings
from diagagent.contract import Diagnosis, Evidence, EvidenceKind, EvidenceRole, NodeScore, SchemaMatch
from diagagent.diagnosis.analyses import INCOMPLETE_CONFIDENCE, Analyses, ProgressSink
from diagagent.diagnosis.confidence import explain
from diagagent.diagnosis.differential import Decision, Hit, Line, decide, match_lines
from diagagent.diagnosis.slow import slow_is_not_a_hang
from diagagent.telemetry import Bundle, Job, parse_timestamp

if TYPE_CHECKING:
    from diagagent.analysis.stacks import StackCluster
    from diagagent.schemata import FailureSchema, SchemaHit

# How much one analyzer's vote counts toward a node being faulty (a faulty probe verdict is near-proof).
WEIGHTS = {"health": 0.95, "logs": 0.85, "stacks": 0.8, "flows": 0.8}
NAMED_SHARE = 0.85  # another node is named faulty at this share of the top node's fused score ...
NAMED_FLOOR = 0.3  # ... and at least this fused score
MAX_NAMED = 8  # L4 recommends its top 8 nodes
MAX_LOG_CAUSES = 4
MAX_SAME_ERROR = 2  # lines of one cause event on other ranks, cited beside its first
XID_SLACK_S = 120.0  # a kernel clock and a job's recorded start or end this far apart still agree
MAX_PROBE_LINES = 4
MAX_THREAD_DUMPS_CITED = 2
SCHEMA_TIE = 0.02  # two schemata of other categories this close in score: the match tells neither (dev:transformers-25988
# matched user_code_exception's and framework_bug's same AttributeError template alike)
# Probes that test a node (a diagnostic run, a benchmark): they confirm what the device state (dmesg, nvidia-smi,
# ibstat, port counters) shows, so where the device state shows a fatal fault they are context, not the cause.
CONFIRMING_PROBES = {"dcgm-diag", "nccl-tests"}
HUNG_FLOW_WEIGHT = 0.5  # a hung job's iteration timing says little about who hung; the stacks do
MISSING_PART_NOTES = {
    "logs": "no logs/ in this bundle: error lines, stage and iteration come from the other parts only",
    "flows": "no flows/ in this bundle: slowdowns, stragglers and silent hangs cannot be timed from the network",
    "stacks": "no stacks/ in this bundle: a hang cannot be localized by stack clustering (take py-spy dumps)",
    "probes": "no probes/ in this bundle: hardware faults are not confirmed by nvidia-smi, dcgmi, dmesg or ibstat",
}


@dataclass
class _Votes:
    """Per host: each analyzer's vote (0..1), the reasons, and the evidence ids behind them."""

    by_source: dict[str, dict[str, float]] = field(default_factory=dict)
    reasons: dict[str, list[str]] = field(default_factory=dict)
    evidence: dict[str, list[str]] = field(default_factory=dict)

    def add(self, host: str, source: str, score: float, reason: str, evidence: list[str] = ()) -> None:
        votes = self.by_source.setdefault(host, {})
        votes[source] = max(votes.get(source, 0.0), min(max(score, 0.0), 1.0))
        if reason:
            self.reasons.setdefault(host, []).append(f"{source}: {reason}")
        self.evidence.setdefault(host, []).extend(e for e in evidence if e not in self.evidence[host])

    def fused(self, host: str) -> float:
        miss = 1.0
        for source, score in self.by_source.get(host, {}).items():
            miss *= 1.0 - WEIGHTS[source] * score
        return 1.0 - miss

    def ranked(self) -> list[tuple[str, float]]:
        return sorted(((h, self.fused(h)) for h in self.by_source), key=lambda x: (-x[1], x[0]))


@dataclass
class _Gathered:
    votes: _Votes = field(default_factory=_Votes)
    log_causes: list[Evidence] = field(default_factory=list)
    probe_causes: list[Evidence] = field(default_factory=list)
    other_causes: list[Evidence] = field(default_factory=list)  # stacks, flows: a file at most, or a dump's frame
    symptoms: list[Evidence] = field(default_factory=list)
    frames: dict[str, list[Evidence]] = field(default_factory=dict)  # a cited exception's id: the frames that raised it
    context: list[Evidence] = field(default_factory=list)
    query: list[str] = field(default_factory=list)  # what the schema cache is searched with
    alone: set[str] = field(default_factory=set)  # nodes whose logs show a cause line no other node's do


def _strong(level: str | None) -> bool:
    return level in ("error", "fatal")


def _other_parts_show_it(a: Analyses) -> bool:
    """Stacks, flows or probes point at the failure on their own (a hang or slowdown that logs may not show)."""
    stacks, flows, health = a.stacks, a.flows, a.health
    return bool((stacks is not None and any(c.role == "outlier" for c in stacks.clusters))
                or (flows is not None and flows.flagged)
                or (health is not None and any(n.verdict == "faulty" for n in health.nodes)))


# The launchers' one-line summary of a failed rank, as they print it: torchrun's elastic agent ("failed (exitcode: 1)
# local_rank: 0 (pid: 51588) of binary", dev:fambench-103), DeepSpeed's launcher ("exits with return code = -9") and
# srun ("srun: error: node-3: task 12: Exited with exit code 1", and a task's signal: "srun: error: nid006549: task 0:
# Segmentation fault (core dumped)", dev:cscs-docs-openmpi, "task 0: Aborted", dev:olcf-user-docs-frontier-user-guide),
# OpenMPI's mpirun ("mpirun noticed that process rank 3 with PID 4242 on node gpu-7 exited on signal 9 (Killed).") and
# Ray's ("Worker exit type: SYSTEM_ERROR"); Composer's launcher ("Rank 0 crashed with exit code 1.", dev:streaming-310),
# torch.multiprocessing.spawn ("-- Process 1 terminated with the following error:", dev:zipvoice-17), Horovod's
# ("Horovod detected that one or more processes exited with non-zero status", dev:determined-3275), PaddlePaddle's
# ("ABORT!!! Out of all 4 trainers, the trainer process with rank=[0, 1, 2, 3] was aborted", dev:paddleocr-3493)
_LAUNCHER_SUMMARY = re.compile(r"failed \(exitcode: -?\d+\) local_rank: \d+|exits with return code = -?\d+|"
                               r"srun: error: \S+: tasks? [\d,-]+: (?:Exited with exit code|Killed|Terminated|"
                               r"Segmentation fault|Aborted|Bus error)|"
                               r"mpirun noticed that process rank \d+ with PID \d+ on node \S+ exited on signal|"
                               r"Worker exit type: \w+|\bRank \d+ crashed with exit code -?\d+|"
                               r"-- Process \d+ terminated with the following error:|"
                               r"one or more processes exited with non-zero status|"
                               r"the trainer process with rank=\[[\d, ]+\] was aborted")


def _cite_log(a: Analyses, loc: LogLocation, role: EvidenceRole, why: str, score: float = 0.0) -> Evidence:
    """A log line the logs analysis located, as evidence, with its time where the line printed one."""
    return a.evidence.cite("log", role=role, file=loc.file, line=loc.line, end_line=loc.end_line, host=loc.host,
                           rank=loc.rank, text=loc.text, why=why, ts=loc.ts if loc.ts_exact else None, score=score)


# a rank's number in a line: '--local_rank=2' (argparse's error, dev:firefly-154), '[rank1]:', 'Rank 3', 'local_rank: 0'
_RANK_NUMBER = re.compile(r"(?i)(\blocal[_-]rank\b\s*[=:]?\s*|\[?\brank\s*)(\d+)")


def _another_rank(first: str, again: str) -> bool:
    """The same line printed by another rank of one log: alike but for the rank's number, which differs."""
    ranks = [[m.group(2) for m in _RANK_NUMBER.finditer(t)] for t in (first, again)]
    return bool(ranks[0]) and ranks[0] != ranks[1] and \
        _RANK_NUMBER.sub(r"\1N", first).strip() == _RANK_NUMBER.sub(r"\1N", again).strip()


def _from_logs(a: Analyses, g: _Gathered) -> None:
    logs = a.logs
    if logs is None:
        return
    causes = [e for e in logs.events if e.role == "cause"]
    if any(not _strong(e.level) for e in causes) and _other_parts_show_it(a):
        # below error level, a log line is a weaker witness than an outlier stack, a flagged flow or a faulty probe
        causes = [e for e in causes if _strong(e.level)]
    by_event: dict[str, str] = {}
    for event in causes[:MAX_LOG_CAUSES]:
        loc = event.first
        ev = _cite_log(a, loc, "cause", event.why, event.score)
        g.log_causes.append(ev)
        by_event[event.id] = ev.id
        g.query.append(loc.text)
        frame = event.raised_at
        if frame is not None:  # where the exception was raised: shown with it, scored as context
            g.frames.setdefault(ev.id, []).append(
                _cite_log(a, frame, "context", f"the frame that raised '{loc.text[:60]}'"))
        inner = event.raised_in  # and, when the job's own code called into a package, the package's frame that raised
        if inner is not None and (frame is None or inner.line != frame.line):
            g.frames.setdefault(ev.id, []).append(
                _cite_log(a, inner, "context", f"the innermost frame of '{loc.text[:60]}'"))
        for other in event.also[:MAX_SAME_ERROR]:  # the same error on a few other ranks of the root node(s)
            g.log_causes.append(_cite_log(a, other, "cause", f"{event.why}; also here", event.score * 0.9))
        # in a log whose ranks print with no prefix, the same error on another rank is the line printed again with
        # another rank's number (dev:firefly-154, tecogan-pytorch-31); prefixed ranks the logs analysis tells
        # apart, and `also` holds theirs
        last = event.last
        if not event.also and last is not None and loc.rank is None and _another_rank(loc.text, last.text):
            g.log_causes.append(_cite_log(a, last, "cause", f"{event.why}; the same error on another rank",
                                          event.score * 0.9))
    summary = next((e for e in logs.events if e.role != "cause" and _LAUNCHER_SUMMARY.search(e.first.text)), None)
    if summary is not None:  # which rank failed, with what exit code or signal: shown beside the causes
        g.context.append(_cite_log(a, summary.first, "context", "the launcher's summary of the failed rank"))
    for event in [e for e in logs.events if e.role == "symptom"][:2]:
        loc = event.first
        ev = _cite_log(a, loc, "symptom", f"{event.why} ({event.count} lines on {event.host_count} nodes)",
                       event.score)
        g.symptoms.append(ev)
        if not causes:
            g.query.append(loc.text)
    anomalies = logs.metric_anomalies[:1]
    if anomalies and anomalies[0].kind == "data_loading_bound":  # why the steps are slow, and where they began to be
        anomalies += [m for m in logs.metric_anomalies if m.kind == "step_time_slowdown"
                      and m.location.line != anomalies[0].location.line][:1]
    elif anomalies and anomalies[0].kind.startswith(NOT_FINITE):  # and the next metric that went NaN or infinite
        # on its own line: the grad norm first, then the loss (dev:automodel-1883, 'step 11 | loss 2.3224 | grad_norm
        # nan', then 'step 12 | loss    nan'; dev:gemma_pytorch-24)
        first = anomalies[0]
        then = next((m for m in logs.metric_anomalies if m.kind.startswith(NOT_FINITE) and m.kind != first.kind),
                    None)
        if then is not None and (then.location.file, then.location.line) != (first.location.file, first.location.line):
            anomalies.append(then)
    for anomaly in anomalies:
        loc = anomaly.location
        if anomaly.kind == "data_loading_bound":
            ev = _cite_log(a, loc, "cause", f"the step waited {anomaly.value:g} s of its {anomaly.previous:g} s on its "
                                            f"data")
            g.log_causes.append(ev)
            g.query.append(f"steps wait on data loading: {loc.text}")
            bound = {m.location.host for m in logs.metric_anomalies if m.kind == "data_loading_bound"}
            if loc.host is not None and bound == {loc.host} and logs.hosts_with_logs > 1:
                # one node's steps wait on their data and the others' do not: its CPUs, disks or mount
                g.votes.add(loc.host, "logs", 0.8, "its steps wait on their data; the other nodes' do not", [ev.id])
            continue
        if anomaly.kind == "step_time_slowdown" and (_other_parts_show_it(a) or anomaly is not anomalies[0]):
            # the flows, probes or data wait show why the steps slowed: the first slow step is context, and the
            # cause's line only when nothing else points
            g.context.append(_cite_log(a, loc, "context", f"the first slow step, iteration {anomaly.iteration}"))
            continue
        ev = _cite_log(a, loc, "cause", f"{anomaly.kind} at iteration {anomaly.iteration}")
        if ev not in g.log_causes:
            g.log_causes.append(ev)
            g.query.append(f"{anomaly.kind.replace('_', ' ')}: {loc.text}")
    role: EvidenceRole = "cause" if not causes else "context"
    for loc in logs.thread_dumps[:MAX_THREAD_DUMPS_CITED]:  # a stack dump in the logs: where a main thread was; the
        # cause when nothing else in the logs is (a hang's py-spy dump, dev:torchtitan-168's faulthandler dump)
        (g.log_causes if role == "cause" else g.context).append(
            _cite_log(a, loc, role, "where this main thread was when its stack was dumped"))
    warned = any(e.level in ("warning", "error", "fatal") and line_kind(split_header(e.first.text).message) != "traceback"
                 for e in logs.events)
    for loc in logs.cut_tracebacks[:MAX_THREAD_DUMPS_CITED]:  # a traceback the log ends in, its exception cut off
        # (dev:pytorch-lightning-18971): where it was raised is what there is to cite; a bare header (the paste ends
        # there, dev:semanticstylegan-8) only when no other line of the logs warns of anything (dev:fairseq-512)
        bare = line_kind(split_header(loc.text).message) == "traceback"
        cut_role: EvidenceRole = "context" if bare and warned else role
        (g.log_causes if cut_role == "cause" else g.context).append(
            _cite_log(a, loc, cut_role, "the header of a traceback the log ends at" if bare
                      else "the innermost frame of a traceback cut before its exception"))
    # the last activity before the failure, as context: the last progress line; for a hang, also the last line
    # the job printed (dev:nccl-85, a hung nccl-tests run whose only tell is the table header it stopped at)
    activity = [logs.last_progress] + ([logs.last_line] if a.bundle.job.status == "hung" else [])
    for loc in [x for x in activity if x is not None]:
        g.context.append(_cite_log(a, loc, "context", "the last thing the job did before it stopped"))
    for loc in logs.silent_first[:2] if a.bundle.job.status == "hung" else []:
        g.context.append(_cite_log(a, loc, "context", f"the last line of rank {loc.rank}, which fell silent first"))
    if logs.last_said is not None:  # and what it last said it was doing before the failure (saving, evaluating)
        g.context.append(_cite_log(a, logs.last_said, "context", "what the job last said it was doing before it failed"))
    if causes and causes[0].before is not None:  # and the line it printed right before the failure: the last activity
        # before a kill ('Test score #1: 2.00962' then 'Killed', dev:caffe-886; 'lr = 1.00e-05', dev:gmtracker-11) or
        # before a traceback's header
        g.context.append(_cite_log(a, causes[0].before, "context", "the last line printed before the failure"))
    for node in logs.nodes[:MAX_NAMED]:
        evs = [by_event[e] for e in node.events if e in by_event]
        if evs and "exclusive" in node.signals and logs.hosts_with_logs > 1:
            g.alone.add(node.host)
        # node ranks without any cause event are weak votes, unless the other nodes single the node out: they name
        # it in their errors and it lacks the cascade they all print (a node that died says nothing of its own)
        strong = causes or {"named", "missing"} <= set(node.signals)
        g.votes.add(node.host, "logs", node.score * (1.0 if strong else 0.35), "; ".join(node.reasons[:2]), evs)


def _from_health(a: Analyses, g: _Gathered) -> None:
    health = a.health
    if health is None or not health.present:
        return
    for node in health.nodes:
        if node.verdict == "healthy":
            continue
        # info lines (a link coming up at boot) are never evidence; a warning is, where nothing worse shows
        worst = "error" if any(s.severity in ("fatal", "error") for s in node.signals) else "warning"
        signals = [s for s in node.signals if s.severity in ("fatal", "error") or s.severity == worst]
        device_state = any(s.probe not in CONFIRMING_PROBES and s.severity == "fatal" for s in signals)
        cited = []
        for signal in signals[:MAX_PROBE_LINES]:
            primary = signal.probe not in CONFIRMING_PROBES or not device_state
            role = "cause" if node.verdict == "faulty" and primary else "context"
            ev = a.evidence.cite("probe", role=role, file=signal.file, line=signal.line, end_line=signal.end_line,
                                 host=node.host, text=signal.text,
                                 why=signal.meaning + (f" ({signal.action})" if signal.action else ""),
                                 score=1.0 if role == "cause" else 0.3)
            cited.append(ev.id)
            if role == "cause":
                g.probe_causes.append(ev)
                g.query.append(signal.text)
            else:
                g.context.append(ev)
            killed = _KILLED_PID.search(signal.text) if role == "cause" else None
            seen = _names_process(a, killed.group(1)) if killed else None
            if seen is not None:  # the kill as the job's own log saw it: the launcher names the process it lost
                g.probe_causes.append(_cite_log(a, seen, "cause", f"names process {killed.group(1)}, the one the "
                                                                  f"kernel killed ({signal.file}:{signal.line})"))
        g.votes.add(node.host, "health", 1.0 if node.verdict == "faulty" else 0.3, node.reason, cited)


# the process the kernel's OOM killer names ("Out of memory: Killed process 410126 (python)"), and a log line naming
# that process: DeepSpeed's launcher "[launch.py:319:sigkill_handler] Killing subprocess 410126"
# (dev:qwen-vl-series-finetune-135), torchrun's "failed (exitcode: -9) local_rank: 0 (pid: 410126)", mpirun's
# "process rank 3 with PID 410126 on node gpu-7"
_KILLED_PID = re.compile(r"Killed process (\d+)")
_NAMES_A_PROCESS = r"(?i)\b(?:pid|(?:sub)?process)\b[\s:=(]*"


def _names_process(a: Analyses, pid: str) -> LogLocation | None:
    """The log line that names process `pid` (as `pid: N`, `PID N`, `process N`, `subprocess N`): an event's line,
    else, in the file of an event whose lines name processes, the one of them that names this one."""
    if a.logs is None:
        return None
    named = re.compile(_NAMES_A_PROCESS + rf"{pid}\b")
    seen = next((loc for e in a.logs.events for loc in (e.first, *e.also) if named.search(loc.text)), None)
    if seen is not None:
        return seen
    naming = re.compile(_NAMES_A_PROCESS + r"\d+\b")
    hosts: dict[str, str | None] = {}  # each file read once, in its first event's place, with that event's host
    for e in [e for e in a.logs.events if naming.search(e.first.text)][:3]:
        hosts.setdefault(e.first.file, e.first.host)
    for file, host in hosts.items():
        at = next(((n, text) for n, text in a.bundle.iter_raw_lines(file) if named.search(text)), None)
        if at is not None:
            return LogLocation(file=file, line=at[0], host=host, text=at[1])
    return None


def _first_overflow(logs: LogFindings, hits: list[Hit]) -> int | None:
    """A loss-scale collapse's first abnormal iteration: the one in progress at its first overflow line (the last
    progress line's iteration + 1), where the scale began to fall; the run of skipped steps ends long after it. None
    when an overflow came before any progress line: the log begins after the onset (dev:chinese-llama-alpaca-2-97's
    paste starts at the floor)."""
    at = {(loc.file, loc.line): loc.iteration for e in logs.events for loc in (e.first, *e.also)}
    seen = [at[key] for h in hits if h.fault == "loss_scale_collapse" and (key := (h.line.file, h.line.line)) in at]
    done = [it for it in seen if it is not None]
    return min(done) + 1 if done and len(done) == len(seen) else None


def _from_stacks(a: Analyses, g: _Gathered) -> None:
    stacks = a.stacks
    if stacks is None or not stacks.present:
        return
    outliers = [c for c in stacks.clusters if c.role == "outlier"][:2]
    # a hang whose dumped ranks all wait in one place, and no line of the logs says why: where they wait is the
    # evidence there is (a shutdown's destroy_process_group, dev:torchtitan-1342; a build lock's FileBaton.wait)
    stuck = [] if outliers or g.log_causes or a.bundle.job.status != "hung" else \
        [c for c in stacks.clusters if c.role == "healthy"][:1]
    for cluster in outliers + stuck:
        who = f"ranks {cluster.ranks_text}" if cluster.ranks else "the dumped processes"  # a dump names no rank
        text = (f"{who} on {', '.join(cluster.hosts[:4])} are in {cluster.top}"
                + (f" ({cluster.collective})" if cluster.collective else ""))
        # where all wait is cited at its thread's stack in a dump, and so is an outlier when the bundle has no logs
        # (the dump is all the evidence: dev:deepspeed-3032, dev:lhotse-1146); else an outlier by its file (the
        # simulator's and evals/cases' truths mark no stack line beside their log lines)
        at = cluster.top_at if cluster.role == "healthy" or "logs" in a.bundle.missing else None
        file, line = at or (cluster.files[0] if cluster.files else None, None)
        ev = a.evidence.cite("stack", role="cause", file=file, line=line, end_line=cluster.top_end if at else None,
                             host=cluster.hosts[0] if cluster.hosts else None,
                             rank=cluster.ranks[0] if cluster.ranks else None, text=text,
                             why="stack differs from the dominant (healthy) cluster" if cluster.role == "outlier"
                             else "where every dumped rank of the hung job waits")
        g.other_causes.append(ev)
        g.query.append(text)
    if stacks.fr_summary is not None and stacks.fr_summary.text:
        g.symptoms.append(a.evidence.cite("stack", role="symptom", text=stacks.fr_summary.text,
                                          why="what the healthy majority waits for"))
    for s in stacks.suspects[:MAX_NAMED]:
        g.votes.add(s.host, "stacks", s.score, s.reason)


def _from_flows(a: Analyses, g: _Gathered) -> None:
    flows = a.flows
    if flows is None or not flows.has_flows or not flows.flagged:
        return
    for s in [s for s in flows.stragglers if s.flagged][:2]:
        ev = a.evidence.cite("flow", role="cause", host=s.host, text=s.evidence or f"{s.host} straggles",
                             why="compute gap between gradient syncs longer than its peers'", score=s.score)
        g.other_causes.append(ev)
        g.query.append(f"straggler: {ev.text}")
    for link in [x for x in flows.slow_links if x.flagged][:2]:
        ev = a.evidence.cite("flow", role="cause", host=link.src, text=link.evidence or f"{link.src}->{link.dst}",
                             why="throughput low against the same traffic on other pairs")
        g.other_causes.append(ev)
        g.query.append(f"slow link: {ev.text}")
    if flows.silence.stopped and flows.silence.evidence:
        g.symptoms.append(a.evidence.cite("flow", role="symptom", text=flows.silence.evidence,
                                          why="the job stopped talking"))
        g.query.append(f"job stopped sending traffic: {flows.silence.evidence}")
    weight = HUNG_FLOW_WEIGHT if a.bundle.job.status == "hung" else 1.0
    for s in flows.suspects[:MAX_NAMED]:
        g.votes.add(s.host, "flows", s.score * weight, s.reason)


def _symptom_phrases(a: Analyses, g: _Gathered) -> list[str]:
    """What the structural findings look like, in the words failure schemata describe symptoms with."""
    phrases = []
    status = a.bundle.job.status
    if status == "hung":
        phrases.append("training stops advancing: the job hung")
    elif status == "slow":
        phrases.append("elapsed time per iteration grows job-wide: the job is slow")
    if not any(_strong(e.level) for e in (a.logs.events if a.logs else []) if e.role == "cause"):
        phrases.append("no error line on the faulty rank")
    stacks = a.stacks
    if stacks is not None and stacks.present:
        for c in [c for c in stacks.clusters if c.role == "outlier"][:2]:
            phrases.append(f"py-spy stacks of ranks {c.ranks_text} differ from all others, stuck in {c.top}")
        fr = stacks.fr_summary
        if fr is not None and fr.collective:
            phrases.append(f"all other ranks wait in the same NCCL collective {fr.collective}")
    flows = a.flows
    if flows is not None and flows.flagged:
        if any(x.flagged for x in flows.stragglers):
            phrases.append("one node's compute phase is longer in every iteration; its peers wait for it in the "
                           "data-parallel all-reduce; its network transfers are normal")
        if any(x.flagged for x in flows.slow_links):
            phrases.append("network flows from or to one host take longer than their peers in the same collective; "
                           "compute time per rank is unchanged")
        if flows.silence.stopped:
            phrases.append("zero network traffic from the job: it stopped talking")
    return phrases


_KERNEL_LINE = re.compile(r"\bkernel: |NVRM: |\bmlx5_core\b|\bmce: |\[Hardware Error\]")
# srun tearing a step down once a task failed: 'srun: error: host: task 5: Exited with exit code 1', then
# 'srun: launch/slurm: _step_signal: Terminating StepId=...', then every other task 'srun: error: host: tasks 3,7:
# Killed' (dev:deit-102): those kills are srun's own, the cascade of the task that exited first
_SRUN_TEARDOWN = re.compile(r"srun: error: \S+: tasks? [\d,-]+: Exited with exit code [1-9]|_step_signal: Terminating StepId")
_SRUN_KILLED = re.compile(r"srun: error: \S+: tasks? [\d,-]+: Killed")


def _differential_lines(a: Analyses) -> list[Line]:
    """Every line the differential weighs: each log template's first line (and its line on a few other ranks), the
    metric anomalies, each probe signal, and the stack and flow findings in words, with the role the analyzers gave
    each. Where the probes found faulty nodes, what other nodes' logs say is the cascade."""
    lines: list[Line] = []
    health, job = a.health, a.bundle.job
    faulty = {n.host for n in health.nodes if n.verdict == "faulty"} if health is not None and health.present else set()
    if a.logs is not None:
        teardown = {}  # file -> the first line where srun started tearing the step down
        for event in a.logs.events:
            if _SRUN_TEARDOWN.search(event.first.text):
                teardown[event.first.file] = min(event.first.line, teardown.get(event.first.file, event.first.line))
        # a failed job that trained on after a sign it printed at startup did not fail of it (huggingface_hub's
        # "'(ReadTimeoutError(...))' thrown while requesting HEAD ...", then "Retrying in 1s [Retry 1/5].", then an
        # hour of steps before a KeyError): with a cause after them, such lines are not weighed
        later_cause = any(e.role == "cause" and not e.trained_after for e in a.logs.events)
        for event in a.logs.events:
            if later_cause and event.trained_after and a.bundle.job.status == "failed":
                continue
            for loc in (event.first, *event.also[:MAX_SAME_ERROR], *([event.last] if event.last else [])):
                role = "symptom" if faulty and loc.host not in faulty and event.role == "cause" else event.role
                if _SRUN_KILLED.search(loc.text) and teardown.get(loc.file, loc.line + 1) < loc.line:
                    continue  # srun's own kill of the step's other tasks: no sign of what killed a rank
                lines.append(Line(file=loc.file, line=loc.line, host=loc.host, rank=loc.rank, text=loc.text,
                                  role=role, where="logs", device_state=bool(_KERNEL_LINE.search(loc.text))))
        for odd in a.logs.odd_ones_out:
            lines.append(Line(file=odd.odd.file, line=odd.odd.line, host=odd.odd.host, rank=odd.odd.rank,
                              role="cause", where="logs", own_setup=True,
                              text=f"only {odd.odd.host} of {odd.alike + 1} nodes prints this, the others "
                                   f"'{odd.instead}' in its place: {odd.odd.text.strip()}"))
        for anomaly in a.logs.metric_anomalies[:3]:
            loc = anomaly.location
            lines.append(Line(file=loc.file, line=loc.line, host=loc.host, text=loc.text, role="cause", where="logs"))
    if health is not None and health.present:
        for node in health.nodes:
            for signal in node.signals:
                if signal.severity in ("fatal", "error", "warning") or _xid_of_the_job(signal.kind, signal.text, job):
                    # (what a node shows only beside its peers, or across readings, is no state its line shows alone:
                    # 'Rate: 100' beside the peers' 400, a load average of 188 beside theirs of 12, a port down and
                    # read Active later, as the health analyzer compared them; nor does a DCGM table's 'Fail - GPU: 5'
                    # row say why without the warning printed under it)
                    text = f"{signal.probe}: {signal.meaning} ({signal.text.strip()})" \
                        if signal.kind in _IN_WORDS else signal.text
                    lines.append(Line(file=signal.file, line=signal.line, host=node.host, text=text,
                                      role="cause" if node.verdict == "faulty" else "context", where="probes",
                                      device_state=signal.kind != "text_probe"))  # (a command's words, no state)
    # where most ranks wait has a place to cite, its frame in a dump (a build lock's FileBaton.wait,
    # dev:deepspeedexamples-302); an outlier's finding stays without one (as _from_stacks cites outliers)
    dominant = {_stack_finding(a.bundle.job.status, c): c for c in a.stacks.clusters
                if c.role == "healthy" and c.top_at} if a.stacks is not None and a.stacks.present else {}
    bar = _preprocessing_when_timed_out(a.logs) if a.logs is not None else None
    if bar is not None:  # at the bar's own line: what was running when the others gave up waiting
        lines.append(Line(file=bar.file, line=bar.line, host=bar.host, rank=bar.rank, role="cause", where="findings",
                          text=f"data preprocessing still running when a wait timed out: {bar.text.strip()}"))
    for text in _findings(a):
        c = dominant.get(text)
        at = c.top_at if c is not None else None
        lines.append(Line(file=at[0] if at else None, line=at[1] if at else None,
                          host=c.hosts[0] if c and c.hosts else None, rank=c.ranks[0] if c and c.ranks else None,
                          text=text, role="cause", where="findings"))
    return lines


_IN_WORDS = ("ib_rate_degraded", "cpu_overloaded", "ib_port_flapped", "memlock_below_peers", "driver_unlike_peers",
             "dcgm_fail")


def _new_code_not_data(a: Analyses, decision: Decision) -> Decision:
    """A DataLoader worker's exception on every node right after new code landed is the new code (a collate function
    or dataset reading a field the data does not have), not a bad sample: a sample is read by one rank, and every
    rank failing alike at once is what they share (blind incident skypilot-colossalai-keyerror-new-commit-2node)."""
    data = "dataloader_corrupt_sample"
    leading = decision.fault or (decision.candidates[0].fault if decision.candidates else None)
    if leading != data or a.logs is None or a.logs.hosts_with_logs < 2 or not a.new_code_landed():
        return decision
    hit = {(h.line.file, h.line.line) for h in decision.hits if h.fault == data}
    if not any((e.first.file, e.first.line) in hit and e.host_count >= a.logs.hosts_with_logs for e in a.logs.events):
        return decision
    tier = decision.tier if decision.fault else "weak"  # (undecided between the two: the code, as a hint)
    confidence = decision.confidence if decision.fault or a.signatures is None else a.signatures.confidence[tier]
    return decision.model_copy(update={"fault": "user_code_exception", "category": "user_code", "tier": tier,
                                       "confidence": confidence, "check": None,
                                       "candidates": [c for c in decision.candidates if c.fault != data]})


def _xid_of_the_job(kind: str, text: str, job: Job) -> bool:
    """An Xid the catalog calls an application's fault (13, 43: info, no sign against the node), printed while the job
    ran: the driver's word on what the job's kernels did (incident nemorun-slurm-xid13-misaligned-customkernel-4node).
    Not one from before the job started (an old Xid 13 on a healthy node), nor one with no time to tell."""
    if kind != "xid" or job.started_at is None:
        return False
    at = parse_timestamp(text)
    end = job.ended_at.timestamp() if job.ended_at is not None else None
    return at is not None and at >= job.started_at.timestamp() - XID_SLACK_S and (end is None or at <= end + XID_SLACK_S)


# the progress bar of Hugging Face datasets' map and filter (tqdm with its unit " examples": "Running tokenizer on
# dataset:   9%|███| 280000/2969526 [29:55<4:48:08, 155.57 examples/s]", dev:llamafactory-2424; "Tokenizing Prompts
# (num_proc=64):  92%|█| 328986/359152 [29:58<12:05, 41.59 examples/s]", dev:axolotl-2684)
_DATASET_BAR = re.compile(r"(\d+)/(\d+) \[[\d:]+<[\d:?]+, *[\d.?]+ ?examples/s\]")
_TIMED_OUT = re.compile(r"(?i)\btimed? ?out\b|\btimeout\b")


def _preprocessing_when_timed_out(logs: LogFindings) -> LogLocation | None:
    """The last unfinished dataset progress bar, when the failure is a wait that timed out: one rank still mapped the
    data (transformers' main_process_first) while the others' collective or store wait ran out (30 minutes by default)."""
    if not any(_TIMED_OUT.search(e.first.text) for e in logs.events if e.role == "cause"):
        return None
    bars = [loc for e in logs.events for loc in e.printed_at()
            if (m := _DATASET_BAR.search(loc.text)) and int(m.group(1)) < int(m.group(2))]
    return max(bars, key=lambda loc: (loc.file, loc.line)) if bars else None


# Ray re-raises a task's or actor's exception under its own class, naming the original in parentheses
# ("ray.exceptions.RayTaskError(KeyError): ray::main_task() (pid=1353885, ...)", dev:reasoning-gym-417, dev:verl-5558):
# the finding names the original class
_RAY_WRAPPED = re.compile(r"\b(?:ray\.exceptions\.)?Ray(?:Task|Actor)Error\((\w+)\)")


def _stack_finding(status: str | None, cluster: StackCluster, main: StackCluster | None = None) -> str:
    """A cluster in words; an outlier stuck saving a checkpoint says so (rank 0 in s3fs's upload under Lightning's
    save_checkpoint while the others wait at its barrier: the storage, not the GPU); so does one in the same function
    as the others at another line of it (it took another path to another sync point: rank 11 at train_moe.py:171,
    the others at :158, blind incident raytrain-collective-mismatch-pyspy-2node)."""
    if main is not None and cluster.role == "outlier" and cluster.stack and main.stack:
        here, there = cluster.stack[0], main.stack[0]
        if not here.native and (here.function, here.file) == (there.function, there.file) and here.line != there.line:
            return (f"stack outlier ({status} job) at another line of the others' function: ranks "
                    f"{cluster.ranks_text} at {cluster.top}, the others at {main.top}")
    outlier = " outlier" if cluster.role == "outlier" else ""
    saving = cluster.role == "outlier" and _stack_stage(cluster) == "checkpoint"
    return f"stack{outlier} ({status} job){' in checkpoint' if saving else ''}: ranks {cluster.ranks_text} in {cluster.top}"


def _stack_stage(cluster: StackCluster) -> str | None:
    """The stage a cluster's Python frames name, outermost first."""
    return stage_of_frames([f.function for f in reversed(cluster.stack) if not f.native])


def _findings(a: Analyses) -> list[str]:
    """What the stacks, flows and tracebacks found, in the words knowledge/signatures.yaml matches (where: findings)."""
    status = a.bundle.job.status
    out = []
    stacks = a.stacks
    if stacks is not None and stacks.present:
        main = next((c for c in stacks.clusters if c.role == "healthy"), None)
        out += [_stack_finding(status, c, main) for c in stacks.clusters if c.role == "outlier"][:2]
        out += [_stack_finding(status, c) for c in stacks.clusters if c.role == "healthy"][:1]  # where most ranks are
        fr = stacks.fr_summary
        out += [f"collective type mismatch ({status} job): ranks {m.ranks_text} wait in {m.collective}, the others in "
                f"{fr.collective}" for m in (fr.states if fr is not None else []) if m.state == "type_mismatch"][:1]
    if a.logs is not None:  # where each cause exception was raised: a framework's own code, the job's, a library's
        for e in [e for e in a.logs.events if e.role == "cause" and e.raised_in is not None][:2]:
            frame = e.raised_in.text.strip()  # type: ignore[union-attr]
            framework = a.signatures.framework_of(frame) if a.signatures is not None else None
            raised = _RAY_WRAPPED.sub(r"\1", e.first.text.strip())
            out.append(f"exception raised{f' in framework {framework}' if framework else ''} at: {frame} => {raised}")
        shown = any(e.role == "cause" and line_kind(split_header(e.first.text).message) == "exception"
                    for e in a.logs.events)
        for loc in [] if shown else a.logs.cut_tracebacks[:1]:  # a traceback cut before its exception, and no other
            # exception in the logs: where it got to
            framework = a.signatures.framework_of(loc.text) if a.signatures is not None else None
            out.append(f"traceback cut before its exception{f' in framework {framework}' if framework else ''} at: "
                       f"{loc.text.strip()}")
        out += [f"data loading holds up the steps ({status} job): {m.value:g} s of a {m.previous:g} s step waited on data"
                for m in a.logs.metric_anomalies if m.kind == "data_loading_bound"][:1]
    flows = a.flows
    if flows is not None and flows.has_flows and flows.flagged:
        out += [f"flow straggler: {s.host}" for s in flows.stragglers if s.flagged][:1]
        out += [f"flow slow link: {x.src} -> {x.dst}" for x in flows.slow_links if x.flagged][:1]
        if flows.silence.stopped:
            out.append("flow silence: the job stopped sending traffic")
    return out


CITED_HIT_WEIGHT = 0.5  # a log line whose signature weighs this much is cited as a cause, even if L4 missed it
MAX_PROOF_LINES = 3


def _cite_hits(a: Analyses, g: _Gathered, hits: list[Hit], min_weight: float = CITED_HIT_WEIGHT,
               candidates: bool = False) -> list[Evidence]:
    """The lines that prove or point to a fault, as cause evidence, strongest first, one per signature: any line
    that the analyzers took for a cause, and others (context, a probe line, a hint) when they are the decided
    fault's. `candidates`: the diagnosis is undecided and these are the signs behind the candidates it names (a weak
    NCCL socket-transport line, dev:areal-639), each cited as a cause of its candidate."""
    out: list[Evidence] = []
    used: set[str] = set()
    for h in hits:
        ln = h.line
        if ln.file is None or h.weight < min_weight or h.signature.id in used:
            continue
        if len(out) >= MAX_PROOF_LINES:
            break
        used.add(h.signature.id)
        kind: EvidenceKind = "log" if ln.where == "logs" or ln.file.startswith("logs/") else \
            "probe" if ln.where == "probes" else "stack"
        ev = a.evidence.cite(kind, role="cause", file=ln.file, line=ln.line,
                             host=ln.host, rank=ln.rank, text=ln.text, score=h.weight,
                             why=f"{h.signature.strength} sign of {h.fault}" + (", one of the candidates" if candidates
                                                                                 else ""))
        if ev not in out:
            out.append(ev)
        if ev not in g.log_causes and ev not in g.probe_causes and ev not in g.other_causes:
            {"logs": g.log_causes, "probes": g.probe_causes, "findings": g.other_causes}[ln.where].append(ev)
            g.query.append(ln.text)
    return out


def _decide(a: Analyses, hits: list[Hit], hit: SchemaHit | None) -> Decision:
    schemata = a.fault_schemata
    categories = {f: s.category for f, s in schemata.items()}
    checks = {f: s.discriminating_checks[0] for f, s in schemata.items() if s.discriminating_checks}
    book = a.signatures
    if book is None:  # no signatures: the best schema decides, as it did before the differential
        return Decision(fault=hit.fault if hit else None, category=hit.failure_schema.category if hit else None,
                        confidence=0.3 if hit else 0.05, tier="schema" if hit else "none")
    return decide(book, hits, categories, (hit.fault, hit.score) if hit else None, checks)


def _vote_for_the_faults_own_lines(g: _Gathered, decision: Decision, schema: FailureSchema | None,
                                   logs: LogFindings | None) -> None:
    """The nodes that printed the lines proving the decided fault, where that says the fault is theirs:
    - a device fault: the node holds the device, so its vote is whole (a rank's 'CUDA error: uncorrectable ECC error
      encountered' outweighs the driver's 'Trial task failed' on another node, which only one node prints too: a Ray
      driver log split by its worker prefixes);
    - a fault of a node's own set-up (`node_environment`) shown by some nodes' lines and not others': those nodes
      (NCCL's 'NET/IB : No device found' from one worker of a DeepSpeed launcher's log, at INFO: a proving line
      the analyzers took for context).
    Network faults are left out: a link's errors are printed by the peers that lost it as often as by its own node;
    so are probe lines, whose node the health analyzer already judged."""
    if schema is None or logs is None or decision.tier == "weak":
        return
    event_at = {(loc.file, loc.line): e for e in logs.events for loc in e.printed_at()}
    own: dict[str, str] = {}  # host -> the signature its lines show
    for h in decision.hits:
        if h.line.where != "logs" or h.line.role == "symptom" or h.signature.strength == "weak":
            continue
        if h.line.own_setup and h.line.host:  # the node alone set up so: the fault is its own, whatever its kind
            if h.line.host not in g.alone:
                g.votes.add(h.line.host, "logs", 1.0, f"set up unlike the other nodes ({h.signature.id})")
                g.alone.add(h.line.host)
            continue
        e = event_at.get((h.line.file, h.line.line))
        hosts = e.hosts if e is not None and e.host_count == len(e.hosts) else [h.line.host] if h.line.host else []
        for host in hosts:
            own.setdefault(host, h.signature.id)
    if schema.category == "hardware" or schema.node_environment and len(own) < logs.hosts_with_logs:
        for host, signature in own.items():
            g.votes.add(host, "logs", 1.0, f"its own lines show {decision.fault} ({signature})")
            if schema.node_environment:
                g.alone.add(host)


def _named_nodes(g: _Gathered, schema: FailureSchema | None, job_hosts: set[str]) -> list[NodeScore]:
    """The nodes that hold the fault: the top one, and others only as strong and confirmed by a second witness.

    A software or data failure names no node unless a probe finds one faulty: the node is not what broke.
    """
    ranked = [(h, s) for h, s in g.votes.ranked() if h in job_hosts]
    if not ranked:
        return []
    top = ranked[0][1]
    sources = g.votes.by_source

    def confirmed(h: str) -> bool:
        return sources[h].get("health", 0.0) >= 1.0 or len(sources[h]) >= 2

    named = [ranked[0]] if top >= NAMED_FLOOR else []
    named += [(h, s) for h, s in ranked[1:] if s >= NAMED_SHARE * top and confirmed(h)]
    if schema is not None:
        node_local = schema.category in ("hardware", "network") or (
            schema.category == "infrastructure" and schema.spatial == "one_node")
        if not node_local or schema.spatial == "all_nodes":
            # a probe's verdict names the node; so do its logs alone where the fault lives in a node's own set-up, and
            # for a cascade (a watchdog timeout with no root of its own), the stacks' outlier: the rank the others wait
            # for (its schema's check: stack outliers on the lagging rank's node)
            alone = g.alone if schema.node_environment else set()
            behind = {h for h in sources if schema.cascade and sources[h].get("stacks", 0.0) > 0.0}
            named = [(h, s) for h, s in named if sources[h].get("health", 0.0) >= 1.0 or h in alone | behind]
    return [NodeScore(host=h, score=round(s, 4), reason="; ".join(g.votes.reasons.get(h, [])[:3]),
                      evidence=g.votes.evidence.get(h, [])[:6]) for h, s in named[:MAX_NAMED]]


def _is_code(text: str) -> bool:
    """A traceback's frame or source line (`File "x.py", line 9, in f` / `    raise ...`), after any rank prefix."""
    parsed = split_header(text)
    return parsed.indented or line_kind(parsed.message) == "frame"


def _ordered_causes(g: _Gathered, named: list[str], proof: list[Evidence]) -> list[Evidence]:
    """Cause evidence: the lines that prove the decided fault first, then the named nodes' first: their log lines,
    their probe lines, then the rest."""
    first = set(named[:1])

    def on_top(e: Evidence) -> int:
        return 0 if e.host in first else 1

    logs = sorted(g.log_causes, key=on_top)
    probes = sorted(g.probe_causes, key=on_top)
    code = [e for e in proof if _is_code(e.text)]  # a frame that proves it goes beside the exception, not above it
    out = [e for e in proof if e not in code] + logs[:2] + code + probes[:2] + logs[2:] + probes[2:] + g.other_causes
    return list({e.id: e for e in out}.values())


def _each_record_once(items: list[Evidence], named: list[NodeScore]) -> tuple[list[Evidence], list[NodeScore]]:
    """Each item once, and none that lies inside a record cited before it (a line of an exception's message that
    matched a signature of its own, dev:deepspeed-6525's pydantic link under its ValidationError); the nodes' evidence
    then names the record that holds it."""
    out: list[Evidence] = []
    held: dict[str, str] = {}
    for e in {e.id: e for e in items}.values():
        holder = next((o for o in out if o.file == e.file and o.line is not None and e.line is not None
                       and o.end_line and o.line < e.line <= o.end_line), None)
        if holder is None:
            out.append(e)
        else:
            held[e.id] = holder.id
    return out, [n.model_copy(update={"evidence": list(dict.fromkeys(held.get(i, i) for i in n.evidence))})
                 for n in named]


def _stage(stage: str | None, cited: list[Evidence], schema: FailureSchema | None, progressed: bool
           ) -> tuple[str | None, bool]:
    """The stage, and whether it is only assumed: the logs' own, else what the cited lines' words say, else the one
    stage the decided fault's schema happens in (an import error: init); else, assumed, the stage it usually happens
    in (its schema lists that first; on dev, 8 of 9 kills of unknown stage were in training). With no fault to go by,
    a failed job whose logs show no training step is assumed to have failed before training: a weak guess (on dev,
    first 15 of 24 such cases were init and 9 training; at 316 cases, 14 init and 13 other), said so in the notes."""
    if stage is None:
        stage = next((st for st in map(stage_of_words, (e.text for e in cited)) if st), None)
    if stage == "training" and schema is not None and schema.temporal == ["checkpoint"]:
        # a fault that happens only in a save (a checkpoint's write cut short) fails between steps: the steps the
        # logs show are what came before it (dev: 11 of 11 such cases' stage is checkpoint; dev:mxnet-6050)
        return "checkpoint", False
    if stage is not None:
        return stage, False
    if schema is None or not schema.temporal:
        return ("init", True) if not progressed else (None, False)
    return schema.temporal[0], len(schema.temporal) > 1


_XID_IN_TITLE = re.compile(r"\s*\(Xid [^)]*\)")
_XID = re.compile(r"\bXid\s*(?:\([^)]*\)\s*:?\s*)?(\d+)")


def _xids(texts: list[str]) -> set[str]:
    """The Xid numbers these texts name: dmesg's 'NVRM: Xid (PCI:0000:5d:00): 94, ...', a title's '(Xid 48)'."""
    return {x for t in texts for x in _XID.findall(t)}


def _what(decision: Decision, schemata: dict[str, FailureSchema], causes: list[Evidence]) -> str:
    cited_xids = _xids([e.text for e in causes])

    def title(fault: str) -> str:
        text = schemata[fault].title if fault in schemata else fault
        if not _xids([text]) & cited_xids:
            # a title's Xid only where a cited line names it (not on CUDA's 'uncorrectable ECC error encountered'
            # alone, dev:alpaca-lora-123; not Xid 48's title over a dmesg Xid 94)
            text = _XID_IN_TITLE.sub("", text)
        return text

    if decision.fault is not None:
        return title(decision.fault)
    names = [title(c.fault) for c in decision.candidates[:2]]
    if len(names) == 2:
        return f"Not sure: {names[0]}, or {names[1]}"
    if names:
        return f"Not sure, possibly: {names[0]}"
    return textwrap.shorten(causes[0].text, 120, placeholder=" ...") if causes else ""


def _root_cause(what: str, named: list[NodeScore], causes: list[Evidence], stage: str | None,
                iteration: int | None) -> str:
    if not what:
        return "No failure evidence found in this bundle."
    where = ""
    if named:
        hosts = ", ".join(n.host for n in named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
        rank = next((e.rank for e in causes if e.host == named[0].host and e.rank is not None), None)
        where = f" on {hosts}" + (f" (rank {rank})" if rank is not None and len(named) == 1 else "")
    when = f" at iteration {iteration}" if iteration is not None else (f" during {stage}" if stage else "")
    return f"{what}{where}{when}."


READ_NOTES = 8  # read problems that lost data (a cut file, a budget hit, a link out) named in the notes


def _notes(a: Analyses, decision: Decision, named: list[NodeScore]) -> list[str]:
    notes = [MISSING_PART_NOTES[p] for p in a.bundle.missing]
    if "stacks" in a.bundle.missing and a.logs is not None and a.logs.thread_dumps:
        notes[notes.index(MISSING_PART_NOTES["stacks"])] = (
            f"no stacks/ in this bundle: {len(a.logs.thread_dumps)} stack dump(s) printed in the logs were read for "
            "where each main thread was; py-spy dumps of every rank would localize a hang")
    notes.extend(a.notes)
    for findings, attr in ((a.flows, "note"), (a.stacks, "note"), (a.health, "note")):
        text = getattr(findings, attr, "") if findings is not None else ""
        if text and text not in notes:
            notes.append(text)
    if a.logs is not None and a.logs.launcher_failure and a.logs.launcher_failure_at is not None:
        at = a.logs.launcher_failure_at
        notes.append(f"the launcher's first observed failure ({at.file}:{at.line}): {a.logs.launcher_failure} (the "
                     "first rank it saw fail, not always where the fault began)")
    if a.logs is not None:
        said_cross_job = any("cross-job" in n for n in notes)
        notes.extend(n for n in a.logs.notes[:3] if n not in notes and not (said_cross_job and "cross-job" in n))
    lost = list(dict.fromkeys(str(i) for i in a.bundle.issues if i.lost))  # files cut, budgets hit, links skipped
    notes.extend(n for n in lost[:READ_NOTES] if n not in notes)
    if len(lost) > READ_NOTES:
        notes.append(f"{len(lost) - READ_NOTES} more read problem(s) of this kind: `diagagent show` lists them all")
    if decision.fault is None and decision.candidates:
        names = " or ".join(c.fault for c in decision.candidates[:2])
        notes.insert(0, f"the evidence does not single out one fault ({names})"
                     + (f": {decision.check}" if decision.check else ""))
    health = a.health
    if named and decision.category in ("hardware", "network"):
        top = named[0].host
        probed = health is not None and health.present and health.node(top) is not None
        if not probed:
            notes.append(f"confirm on the hardware before evicting: `diagagent probe {top} --probe dcgm-diag` "
                         f"and `--probe dmesg` (add `--save` to keep them in the bundle)")
    return notes


def _stack_evidence(a: Analyses) -> bool:
    """Stack dumps that show where ranks were: py-spy outlier clusters, or dumps printed in the logs."""
    stacks = a.stacks
    clustered = stacks is not None and stacks.present and any(c.role == "outlier" for c in stacks.clusters)
    return clustered or bool(a.logs is not None and a.logs.thread_dumps)


def diagnose(bundle: Bundle, settings: Settings | None = None, *, analyses: Analyses | None = None,
             on_progress: ProgressSink | None = None) -> Diagnosis:
    """The offline diagnosis of one bundle: every analyzer that has data, the schema cache, and proposals."""
    a = analyses or Analyses(bundle, settings, on_progress)
    a.run_all()
    g = _Gathered()
    _from_logs(a, g)
    _from_health(a, g)
    _from_stacks(a, g)
    _from_flows(a, g)
    logs = a.logs
    stage = logs.stage if logs is not None else None
    if a.stacks is not None and a.stacks.present and (stage is None or bundle.job.status == "hung"):
        # where most ranks' stacks are: a hang's dump says where the job stands now, past its last log line (every
        # rank in Lightning's save_checkpoint, most at its barrier, after the progress line of step 8000)
        healthy = [c for c in a.stacks.clusters if c.role == "healthy"][:1]
        stage = (_stack_stage(healthy[0]) if healthy else None) or stage
    sig_hits = match_lines(a.signatures, _differential_lines(a), stage, a.bundle.job.status) if a.signatures is not None else []
    proof = _cite_hits(a, g, [h for h in sig_hits if h.line.role == "cause"])
    query = list(dict.fromkeys(g.query + _symptom_phrases(a, g)))
    hits = a.search_schemata(query, k=5) if (g.query or a.bundle.job.status in ("hung", "slow")) else []
    hit = hits[0] if hits else None
    tied = len(hits) > 1 and hits[1].score >= hit.score - SCHEMA_TIE and (
        hits[1].failure_schema.category != hit.failure_schema.category)
    decision = _decide(a, sig_hits, None if tied else hit)  # two categories' schemata that match alike tell neither
    decision = slow_is_not_a_hang(decision, bundle.job.status, _stack_evidence(a),
                                  a.signatures.confidence["unsure"] if a.signatures is not None else 0.05)
    decision = _new_code_not_data(a, decision)
    # each fault's schema: the best match where it names that fault (its title says Xid 94, not just ECC)
    schemata = {**a.fault_schemata, **{h.fault: h.failure_schema for h in reversed(hits)}}
    xids = _xids([h.line.text for h in decision.hits])
    shown = next((h.failure_schema for h in hits if decision.fault and h.fault == decision.fault
                  and _xids([h.failure_schema.title]) & xids), None)
    if shown is not None:  # the fault's schema whose Xid the evidence shows (Xid 94's, over a closer Xid 48's)
        schemata[shown.fault] = shown
    fault_schema = schemata.get(decision.fault) if decision.fault else None
    _vote_for_the_faults_own_lines(g, decision, fault_schema, logs)
    named = _named_nodes(g, fault_schema, set(bundle.job.hosts))
    decided = [h for h in decision.hits if h.line.role != "symptom" or decision.tier == "weak"] if decision.fault else []
    proof += [e for e in _cite_hits(a, g, decided, min_weight=0.0) if e not in proof]
    if decision.fault is None:  # undecided: the lines behind each candidate the note names are cited
        _cite_hits(a, g, decision.hits, min_weight=0.0, candidates=True)
    proving = {(h.line.file, h.line.line) for h in decision.hits}
    proof = sorted(proof, key=lambda e: (e.file, e.line) not in proving)  # the decided fault's lines first
    causes = _ordered_causes(g, [n.host for n in named], proof)
    # each cause, then the frames that raised it (the issue's order: cause, its raising frame, the same error on
    # another rank, context)
    with_frames = [x for e in causes for x in (e, *g.frames.get(e.id, []))]
    stage, assumed = _stage(stage, with_frames, fault_schema,
                            progressed=logs is None or logs.last_progress is not None or bundle.job.status != "failed")
    iteration = logs.first_abnormal_iteration if logs is not None else None
    if iteration is None and logs is not None:
        iteration = logs.slow_from_iteration
    if decision.fault == "loss_scale_collapse" and logs is not None:
        iteration = _first_overflow(logs, decision.hits) or iteration
    confidence = decision.confidence if causes or decision.fault else min(decision.confidence, 0.1)
    confidence = round(confidence * INCOMPLETE_CONFIDENCE ** len(set(a.incomplete)), 4)  # what was not read
    evidence, named = _each_record_once(with_frames + g.symptoms + g.context, named)
    diagnosis = Diagnosis(
        job_id=bundle.job.job_id, status=bundle.job.status,
        category=decision.category, fault=decision.fault,
        root_cause=_root_cause(_what(decision, schemata, causes), named, causes, None if assumed else stage, iteration),
        confidence=confidence, faulty_nodes=named, stage=stage, iteration=iteration,
        evidence=evidence,
        schemata=[SchemaMatch(schema_id=h.id, title=h.failure_schema.title, fault=h.fault,
                              category=h.failure_schema.category, score=h.score, similarity=h.similarity,
                              template_overlap=h.template_overlap) for h in hits],
        notes=_notes(a, decision, named) + (
            [f"stage: the logs do not show it; {stage} is where {decision.fault} usually happens" if fault_schema
             else "stage: the logs show no training step, so init is assumed (a paste may have left the steps out)"]
            if assumed else []),
        candidates=decision.candidates, check=decision.check,
        confidence_why=explain(a, decision, named, fault_schema, confidence))
    diagnosis.proposals = a.proposals(diagnosis, fault_schema)
    return diagnosis
