"""L4 over one bundle's logs: failure-indicating events, faulty nodes, stage and iteration, metric anomalies.

Cross-job (templates common in successful jobs are normal), spatial (what differs between nodes, and which node is
missing from a cascade), temporal (stage markers, progress, the first error before the cascade), as `LogFindings`.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from diagagent.analysis.guard import Budget
from diagagent.analysis.logparse import (
    ELASTIC_SUMMARY_PLACEHOLDERS,
    LEVEL_RANK,
    Level,
    data_bound,
    finished_bar,
    is_cascade,
    line_kind,
    names_a_stage,
    saved_step,
    split_header,
    stage_of_collective,
    stage_of_frames,
    stage_of_words,
)
from diagagent.analysis.logscan import (
    RAISE_STATEMENT,
    FileSummary,
    LogScan,
    MetricEvent,
    Occurrence,
    Template,
    ThreadDump,
    scan_bundle,
)
from diagagent.analysis.templates import (
    K_CARET,
    K_ERROR_WORDS,
    K_EXCEPTION,
    K_FRAME,
    K_MARKER_MASK,
    K_TRACEBACK,
    NormalPool,
)
from diagagent.analysis.workers import Workers
from diagagent.telemetry import Bundle, BundleError, JobStore, UnknownJob

Role = Literal["cause", "symptom", "context"]
StageName = Literal["init", "training", "checkpoint", "eval", "shutdown"]
_LEVELS: list[Level] = ["debug", "info", "warning", "error", "fatal"]
_LEVEL_WEIGHT = {-1: 0.1, 0: 0.05, 1: 0.12, 2: 0.45, 3: 0.85, 4: 1.0}
NORMAL_SHARE = 0.5  # a template in at least this share of successful jobs is normal (L4's cross-job filter)
CAUSE_WINDOW_S = 30.0  # cause events begin within this long of the first one; later ones are the cascade
SAME_TIME_S = 2.0


class LogLocation(BaseModel):
    file: str
    line: int
    end_line: int | None = None  # a record over several lines (a terminal's cut joined back, a frame and its source
    # line, an exception and its message): its last line
    host: str | None = None
    rank: int | None = None
    ts: float | None = None
    # whether the line printed `ts` itself; else it is the time of a line shortly before (a timeline may place the
    # line there, a claim may not say it happened then)
    ts_exact: bool = False
    iteration: int | None = None  # the file's last progress iteration when the line was printed
    text: str = ""


class LogEvent(BaseModel):
    """One template that indicates (or follows from, or frames) the failure."""

    id: str  # the template id: stable across jobs
    template: str
    count: int
    hosts: list[str]  # up to 32, root node first
    host_count: int
    ranks: list[int] = Field(default_factory=list)
    first: LogLocation  # on the root node when it shows this event, else the earliest occurrence
    also: list[LogLocation] = Field(default_factory=list)  # a cause's first line in the root node's other files
    raised_at: LogLocation | None = None  # an exception's raising frame (`File "...", line N, in f`), user code first
    raised_in: LogLocation | None = None  # an exception's innermost frame, in whatever package: where it was raised
    last: LogLocation | None = None  # a warning or error printed again: its last line on that host (where it ended up)
    before: LogLocation | None = None  # the line its file printed last before it: what the job was doing
    level: Level | None = None
    score: float
    why: str
    role: Role
    stage: StageName | None = None  # the stage when it first occurred
    # began before the job's progress, which went on after it (its own file's steps, or any file's by the times
    # printed): the job got over it
    trained_after: bool = False
    normal_share: float | None = None  # share of successful jobs that show it; None without a pool

    def printed_at(self) -> list[LogLocation]:
        """Every line the event is cited at: its first, the same line in other files, and its last."""
        return [self.first, *self.also, *([self.last] if self.last else [])]


class NodeSuspect(BaseModel):
    host: str
    score: float  # 0..1, 1 for the node that stands out most
    reasons: list[str]
    events: list[str] = Field(default_factory=list)  # ids of the events behind it
    signals: list[str] = Field(default_factory=list)  # what singled it out: exclusive, missing, silent, named, first


NOT_FINITE = ("nan_", "inf_")  # the prefix of a metric anomaly's kind whose value went NaN or infinite


class MetricAnomaly(BaseModel):
    kind: str  # nan_loss | inf_loss | nan_grad_norm | inf_grad_norm | loss_jump | grad_norm_jump | nan_iterations
    # | straggler_rank | step_time_slowdown | data_loading_bound (value: the step's data time, previous: its whole time)
    iteration: int | None
    value: float | None
    previous: float | None  # the value before, or the recent median a jump is measured against
    location: LogLocation


class OddOneOut(BaseModel):
    """A line every node prints alike but one: that node's line, and the others' (a node set up unlike the rest)."""

    odd: LogLocation
    usual: LogLocation
    alike: int  # the nodes that print the usual line
    instead: str  # the usual line's words the odd one has not ('ib0:10.9.0.11<0>' for 'docker0:172.17.0.1<0>')


class LogFindings(BaseModel):
    events: list[LogEvent]  # ranked: causes first, then symptoms, then context
    # the last activity: the last progress line of the main log, and the last line the job printed (what a hang's
    # only tell often is)
    last_progress: LogLocation | None = None
    last_line: LogLocation | None = None
    last_said: LogLocation | None = None  # the last line before the top cause whose words say what the job was doing
    # stack dumps printed into the logs (faulthandler, py-spy): the innermost frame of each main thread, the odd ones
    # out first (where those ranks were when the dump was taken)
    thread_dumps: list[LogLocation] = Field(default_factory=list)
    # tracebacks a file ends in before their exception (a cut paste, a process killed mid-print): the innermost frame
    cut_tracebacks: list[LogLocation] = Field(default_factory=list)
    # in files that interleave ranks: the last line of the rank that fell silent first (where a hang's ranks part)
    silent_first: list[LogLocation] = Field(default_factory=list)
    # the launcher's summary of the failed rank (torchrun's root-cause block), in words, with where it is
    launcher_failure: str | None = None
    launcher_failure_at: LogLocation | None = None
    odd_ones_out: list[OddOneOut] = Field(default_factory=list)
    nodes: list[NodeSuspect]  # ranked
    stage: StageName | None
    last_good_iteration: int | None
    first_abnormal_iteration: int | None
    slow_from_iteration: int | None = None
    resumed_from: int | None = None  # the step of the checkpoint the job loaded, as its logs say
    metric_anomalies: list[MetricAnomaly]
    lines_read: int
    lines_skipped: int
    templates: int
    hosts_with_logs: int
    notes: list[str]

    def causes(self) -> list[LogEvent]:
        return [e for e in self.events if e.role == "cause"]


# --- the normal pool a bundle is compared with -----------------------------------------------------------------


def normal_pool_for(bundle: Bundle, state_dir: Path | None, jobs_dir: Path | None,
                    workers: int | None = None) -> tuple[NormalPool | None, list[str]]:
    """The library's pool (`<state_dir>/normal_pool`) plus the job's `history:` jobs, resolved through JobStore and
    learned into the library the first time. Returns the pool (None when empty) and notes on what was used."""
    notes: list[str] = []
    pool = NormalPool.load(state_dir) if state_dir is not None else NormalPool()
    learned = NormalPool()
    for job_id in bundle.job.history:
        if job_id in pool.jobs:
            continue
        if jobs_dir is None:
            notes.append(f"history job {job_id}: no jobs dir to find it in")
            continue
        try:
            with JobStore(jobs_dir).get(job_id) as past:
                learn_job(learned, past, workers)
        except (BundleError, UnknownJob, OSError) as exc:
            notes.append(f"history job {job_id}: not usable ({exc})")
    if learned.jobs:
        pool = pool.merged(learned)
        if state_dir is not None:
            learned.save(state_dir)
        notes.append(f"learned {len(learned.jobs)} history job(s) into the normal pool: {', '.join(learned.jobs)}")
    return (pool if pool.jobs else None), notes


def learn_job(pool: NormalPool, bundle: Bundle, workers: int | None = None) -> int:
    """Add a successful job's templates to a pool; the number of templates it had."""
    scan = scan_bundle(bundle, workers)
    templates = {t.text: (_LEVELS[t.level] if t.level >= 0 else None) for t in scan.templates.values()}
    pool.add_job(bundle.job.job_id, templates, scan.lines_read)
    return len(templates)


# --- temporal: progress, stage, iteration ---------------------------------------------------------------------


@dataclass(slots=True)
class _Timeline:
    last_iteration: int | None = None
    progress_start_ts: float | None = None
    progress_end_ts: float | None = None
    first_nan: MetricEvent | None = None
    slow_from: int | None = None
    slow_ratio: float | None = None
    first_error_ts: float | None = None  # the earliest time an error line printed (for jobs without progress)
    resume_step: int | None = None  # the step of the checkpoint the job loaded
    advanced: bool = False  # some file's iterations moved on: what came before them was survived


def _timeline(files: list[FileSummary]) -> _Timeline:
    progress = [f for f in files if f.last_iteration is not None]
    out = _Timeline()
    if progress:
        out.last_iteration = max(f.last_iteration for f in progress)  # type: ignore[type-var]
        ends = [f.last_iteration_ts for f in progress if f.last_iteration_ts is not None]
        out.progress_end_ts = max(ends) if ends else None
        starts = [f.first_iteration_ts for f in progress if f.first_iteration_ts is not None]
        out.progress_start_ts = min(starts) if starts else None
        out.advanced = any(f.last_iteration != f.first_iteration for f in progress)
    bad = [m for f in files for m in f.metrics if m.kind.startswith(NOT_FINITE)]
    if bad:
        out.first_nan = min(bad, key=lambda m: (m.iteration if m.iteration is not None else math.inf, m.file, m.line))
    resumed = [f.resume_step for f in files if f.resume_step is not None]
    out.resume_step = max(resumed) if resumed else None
    slow = [f for f in files if f.slow_from is not None]
    if slow:
        first = min(slow, key=lambda f: f.slow_from)  # type: ignore[arg-type,return-value]
        out.slow_from, out.slow_ratio = first.slow_from, first.slow_ratio
    return out


def _first_error_ts(scan: LogScan) -> float | None:
    """The earliest printed time of an error line that is no traceback frame or marker."""
    times = [o.ts for tid, per_host in scan.first.items() if scan.templates[tid].level >= LEVEL_RANK["error"]
             and not _is_structure(scan.templates[tid]) for o in per_host.values() if o.ts_exact and o.ts is not None]
    return min(times) if times else None  # type: ignore[type-var]


def _iterations(tl: _Timeline, status: str, has_cause_errors: bool, stage: str | None,
                ) -> tuple[int | None, int | None, list[str]]:
    """(last good, first abnormal) iteration by docs/conventions.md: the first NaN one, the first slow one, or the
    one in progress when the fault struck (after a resumed checkpoint's step when no progress was logged yet)."""
    notes = []
    if tl.first_nan is not None and tl.first_nan.iteration is not None:
        it = tl.first_nan.iteration
        notes.append(f"first NaN/inf at iteration {it} ({tl.first_nan.file}:{tl.first_nan.line})")
        return it - 1, it, notes
    if tl.slow_from is not None and (status == "slow" or not has_cause_errors):
        ratio = f" ({tl.slow_ratio:.1f}x the steps before)" if tl.slow_ratio else ""
        notes.append(f"iterations slow from {tl.slow_from}{ratio}")
        return tl.slow_from - 1, tl.slow_from, notes
    if tl.last_iteration is None:
        if stage == "training" and tl.resume_step is not None:
            notes.append(f"failed in training before any progress line, after resuming from step {tl.resume_step}")
            return tl.resume_step, tl.resume_step + 1, notes
        return None, None, notes
    return tl.last_iteration, tl.last_iteration + 1, notes


def _frames_stage(frames: list[str], tl: _Timeline) -> StageName | None:
    """The stage a traceback's functions name; not init for a script's top level after the job's steps ran (its
    training loop, nanoGPT's), which is left to the markers."""
    stage = stage_of_frames(frames)
    return None if stage == "init" and frames[-1] == "<module>" and tl.last_iteration is not None else stage


_CHAIN = re.compile(r"^(?:The above exception was the direct cause|During handling of the above exception)")


def _chained(scan: LogScan, occ: Occurrence, cut: FileSummary) -> bool:
    """A traceback the log ends at is the outer one of `occ`'s exception: a chain header between them, in one file."""
    end = cut.cut_traceback[0] if cut.cut_traceback is not None else 0
    return occ.file == cut.file and any(
        o.file == occ.file and occ.line < o.line < end
        for tid, per_host in scan.first.items() if _CHAIN.match(scan.templates[tid].text) for o in per_host.values())


def _stage_at(scan: LogScan, occ: Occurrence | None, tl: _Timeline) -> StageName | None:
    """The stage when an event occurred: from its own file's markers when it has some; else (or when another file
    was in a checkpoint or eval then) from every file's markers up to that time; else the job's final stage."""
    files = {f.file: f for f in scan.files}
    own = files.get(occ.file) if occ is not None else None
    if occ is not None and own is not None and own.transitions and occ.stage not in ("init", "training"):
        return occ.stage  # type: ignore[return-value]
    if occ is not None and occ.ts is not None:
        at_time = [(ts, line, s) for f in scan.files for line, ts, s in f.transitions
                   if ts is not None and ts <= occ.ts + SAME_TIME_S]
        if at_time:
            return max(at_time)[2]  # type: ignore[return-value]
    if occ is not None and own is not None and own.transitions:
        if occ.stage == "training" and occ.line > own.last_progress_line and finished_bar(own.last_iteration_text):
            # after the training loop's bar reached its total, what the lines around say (a crash at exit freeing
            # memory, after 'destroy_process_group() was not called', dev:ms-swift-5109)
            return _stage_of_words_around(scan, occ) or occ.stage  # type: ignore[return-value]
        began_mid_run = own.first_iteration is not None and own.first_iteration > 1 and own.resume_step is None
        if occ.stage == "init" and (tl.last_iteration is None or began_mid_run) \
                and all(line > occ.line for line, _, _ in own.transitions):
            # init only as the file's stage before any marker: what was said around the failure decides first
            # (accelerate's 'Saving current state to ...' before a timeout, DeepSpeed's save marker after it,
            # dev:videox-fun-89); so in a paste that begins in the middle of a run, its first step far past 1 with no
            # checkpoint loaded (a GCS write stalling before levanter's 'Saved checkpoint', dev:levanter-578), where
            # with no words it was training
            fallback = "training" if began_mid_run else occ.stage
            return _stage_of_words_around(scan, occ) or fallback  # type: ignore[return-value]
        if occ.stage == "init" and own.last_iteration is None \
                and all(line > occ.line for line, _, _ in own.transitions):
            # a file that logged no step of its own in a job whose other files did (a rank that prints no progress):
            # its 'init' is only where it began, and its startup words were said before the job trained; what it said
            # of a save or an eval decides, else it was training (NeMo's non-zero ranks writing a checkpoint,
            # incident nemo-default-prefix-lustre-evict-ckpt-eio-4node)
            return _stage_of_words_around(scan, occ, past_init=True) or "training"
        return occ.stage  # type: ignore[return-value]
    if tl.last_iteration is None:  # no iteration logged: init only when the words around the failure say so ...
        said = _stage_of_words_around(scan, occ)
        if said != "init" or not any(f.progress_lines for f in scan.files):
            return said
        # ... and not when a loss was printed: a loss with no step count is progress too (pytorch/examples' "Train
        # Epoch: 3 [563200/1281167 (44%)]\tLoss: 4.29" counts samples); the files' stage at their end says where it got
    ends = [f.stage for f in scan.files if f.transitions]
    return Counter(ends).most_common(1)[0][0] if ends else "training"  # type: ignore[return-value]


def _stage_of_words_around(scan: LogScan, occ: Occurrence | None, past_init: bool = False) -> StageName | None:
    """A job that logged no iteration: what the cited line's raising frame and words, else the nearest lines before
    it in its file (then after it: a process table, reversed frames), say it was doing; None when nothing does.
    `past_init`: the job is known to have trained, and words of its startup say nothing of when it failed."""
    if occ is None:
        return None

    def telling(stage: str | None) -> bool:
        return stage is not None and not (past_init and stage == "init")

    texts = [occ.raised_at[1]] if occ.raised_at is not None else []
    texts.append(occ.text)
    own = next((stage for stage in map(stage_of_words, texts) if telling(stage)), None)
    if own is not None:
        return own  # type: ignore[return-value]
    summary = next((f for f in scan.files if f.file == occ.file), None)
    others = [o for per_host in scan.first.values() for o in per_host.values() if o.file == occ.file]
    seen = [(o.line, stage_of_words(o.text)) for o in others]
    said = [(line, stage) for line, stage, _ in summary.word_stages] if summary is not None else []
    around = sorted((line > occ.line, abs(line - occ.line), stage) for line, stage in seen + said
                    if telling(stage) and line != occ.line)
    if around:
        return around[0][2]  # type: ignore[return-value]
    # no words anywhere: the sequence number of a watchdog timeout, its own or the nearest one's
    timeouts = sorted((abs(o.line - occ.line), o.line, stage) for o in [occ, *others]
                      if telling(stage := stage_of_collective(o.text)))
    return timeouts[0][2] if timeouts else None  # type: ignore[return-value]


# --- events: what kind of line each template is, and how strongly it indicates a failure -------------------------

# primary: an error of its own; cascade: a timeout, lost peer or kill
EventKind = Literal["context", "primary", "cascade"]


class _Candidate:
    """Working state of one template while it is scored."""

    def __init__(self, t: Template, per_host: dict[str, Occurrence], hosts_total: int,
                 in_files: dict[str, list[Occurrence]] | None = None, main_files: set[str] | None = None) -> None:
        self.t = t
        self.per_host = per_host
        self.in_files = in_files or {}  # warnings and errors: the first line in each file of a host
        self.main_files = main_files or set()  # the files that log progress
        self.hosts = sorted(per_host, key=lambda h: _occ_key(per_host[h]))
        self.earliest = per_host[self.hosts[0]]
        self.host_share = len(per_host) / max(hosts_total, 1)
        self.kind: EventKind = "context"
        self.score = 0.0
        self.role: Role = "context"
        self.why: list[str] = []
        self.normal_share: float | None = None
        self.phase: Phase = "late"


def _occ_key(o: Occurrence) -> tuple[float, str, int]:
    return (o.ts if o.ts is not None and o.ts_exact else math.inf, o.file, o.line)


def _is_structure(t: Template) -> bool:
    """Markers, traceback frames and headers, source lines, and the continuation of an exception's message."""
    return bool(t.kinds & (K_MARKER_MASK | K_FRAME | K_TRACEBACK | K_CARET)) or t.code \
        or (t.continuation and not t.exception)


Phase = Literal["startup", "training", "late"]
_PHASE_WEIGHT = {"startup": 0.15, "training": 0.5, "late": 1.0}


def _phase(c: _Candidate, tl: _Timeline, files: dict[str, FileSummary]) -> Phase:
    """When the event began: at startup (before progress), during training (a precursor, or noise), or once progress
    had stopped (or never began). Times a line inherits from the lines around it bound its own."""
    if not tl.advanced:  # (a tqdm bar still at 0/3414 when the job crashed is no training: dev:self-rag-91)
        return _phase_without_progress(c, tl)
    start, end = tl.progress_start_ts, tl.progress_end_ts
    exact = [o.ts for o in c.per_host.values() if o.ts_exact and o.ts is not None]
    if exact and start is not None and end is not None:
        return _phase_at(min(exact), start, end)
    phases = set()
    for o in c.per_host.values():
        if o.ts is not None and end is not None and o.ts >= end - SAME_TIME_S:
            return "late"  # after a time printed before it
        if o.ts_next is not None and end is not None:  # before the next time printed
            phases.add(_phase_at(o.ts_next, start, end))
        else:  # progress lines print no time: its place among them in its file
            phases.add(_phase_in_file(o, files.get(o.file), c.host_share >= 0.5))
    for p in ("late", "training", "startup"):
        if p in phases:
            return p  # type: ignore[return-value]
    return "late"


def _phase_without_progress(c: _Candidate, tl: _Timeline) -> Phase:
    """A job that never trained: what came well before its first error is startup."""
    exact = [o.ts for o in c.per_host.values() if o.ts_exact and o.ts is not None]
    if tl.first_error_ts is not None and exact and min(exact) < tl.first_error_ts - BURST_GAP_S:
        return "startup"
    return "late"


def _phase_at(ts: float, start: float | None, end: float | None) -> Phase:
    if start is not None and ts < start - SAME_TIME_S:
        return "startup"
    if end is not None and ts < end - SAME_TIME_S:
        return "training"
    return "late"


def _phase_in_file(o: Occurrence, f: FileSummary | None, widespread: bool) -> Phase:
    """Without any time: its place in its file, against the file's progress lines; in a file without any, the first
    half holds the startup lines every node prints (a line few nodes print is not taken for one)."""
    if f is None:
        return "late"
    if f.last_iteration is not None:
        if o.line > f.last_iteration_line:
            return "late"
        return "startup" if o.line < f.first_iteration_line else "training"
    return "startup" if widespread and o.line < 0.5 * max(f.lines, 1) else "late"


def _event_weight(c: _Candidate, hosts_total: int) -> float:
    t = c.t
    score = _LEVEL_WEIGHT.get(t.level, 0.1)
    c.why.append(_LEVELS[t.level] if t.level >= 0 else "no level")
    if t.level < LEVEL_RANK["error"] and t.kinds & K_ERROR_WORDS:
        score *= 1.3
        c.why.append("its words say error")
    if t.exception:
        score *= 1.4
        c.why.append("ends a traceback")
    if hosts_total >= 3:
        rarity = 1.0 - c.host_share + 1.0 / hosts_total
        score *= 0.35 + 0.65 * rarity
        c.why.append(f"on {len(c.per_host)}/{hosts_total} nodes")
    per_host = t.count / max(len(c.per_host), 1)
    score /= 1.0 + 0.25 * math.log10(1.0 + per_host)
    if per_host <= 3:
        c.why.append("rare")
    return score


def _classify(c: _Candidate, tl: _Timeline, files: dict[str, FileSummary], pool: NormalPool | None,
              hosts_total: int) -> None:
    t = c.t
    c.phase = _phase(c, tl, files)
    c.score = _event_weight(c, hosts_total) * _PHASE_WEIGHT[c.phase]
    if c.phase != "late":
        c.why.append("began at startup" if c.phase == "startup" else "began while training still progressed")
    if pool is not None and pool.jobs:
        c.normal_share = pool.share(t.text)
        if c.normal_share >= NORMAL_SHARE:
            c.score *= 0.1
            c.why.append(f"common in successful jobs ({c.normal_share:.0%})")
    if _is_structure(t) or t.level < LEVEL_RANK["warning"] or c.phase == "startup" \
            or (c.normal_share or 0.0) >= NORMAL_SHARE or _ADVICE.search(t.text):
        c.kind = "context"
    else:
        c.kind = "cascade" if is_cascade(t.text) else "primary"


# What PyTorch appends to every CUDA error's message (c10/cuda/CUDAException: "CUDA kernel errors might be
# asynchronously reported at some other API call, so the stacktrace below might be incorrect.", "For debugging
# consider passing CUDA_LAUNCH_BLOCKING=1.", "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."):
# advice, never the error, though its words say error (dev:self-rag-91); so is torch.distributed.elastic's summary
# line for a rank that wrote no error file, "traceback : To enable traceback see: https://pytorch.org/docs/stable/
# elastic/errors.html" (dev:chatglm-efficient-tuning-75), and what ProcessGroupNCCL's watchdog adds to every timeout:
# "Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU
# operations might run on corrupted/incomplete data." and "To avoid data inconsistency, we are taking the entire
# process down." (dev:llm-foundry-224, dev:funasr-2006); and the bare "Last error:" header of an NCCL error's
# message, whose content is the next line (dev:torchtitan-853, dev:skyrl-108); and NCCL's error trail, one line per
# function the error code passed through ("transport.cu:153 NCCL WARN transport.cu:153 ->2 [Proxy thread error]",
# dev:nccl-193; "INFO init.cc:422 -> 2"): where the error went, the WARN before it says what it was (templates mask
# the numbers: "<*>:<*> -><*>"); and Open MPI's help text after "ORTE has lost communication with a remote daemon."
# (dev:mpi-operator-152), and after "An MPI communication peer process has unexpectedly disconnected." (dev:horovod-1950):
# why it may have happened, in general; and Open MPI's note that it folded repeated help
# messages ('Set MCA parameter "orte_base_help_aggregate" to 0 to see all help / error messages', dev:adeptrl-13);
# and CPython's sys.unraisablehook on an exception that could not propagate (a finalizer's, a __del__'s): 'Exception
# ignored in: <finalize object at 0x7f7d7b9bc920; dead>' did not stop the program (dev:open-r1-658)
_NCCL_TRAIL = re.compile(r"(?:\.(?:cc|cu|cpp|h)|<\*>):(?:\d+|<\*>) ?-> ?(?:\d+\b|<\*>)")
_ADVICE = re.compile(r"^CUDA kernel errors might be asynchronously reported|^For debugging consider passing "
                     r"CUDA_LAUNCH_BLOCKING|^Compile with .TORCH_USE_CUDA_DSA|^traceback\s*: To enable traceback see|"
                     r"Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run|"
                     r"To avoid data inconsistency, we are taking the entire process down|^\s*Last error:\s*$|"
                     rf"{_NCCL_TRAIL.pattern}|"
                     r"^This is usually due to either a failure of the TCP network|^connection to the node, or possibly an "
                     r"internal failure of|^the daemon itself\. We cannot recover from this failure|"
                     r"Set MCA parameter .orte_base_help_aggregate. to (?:0|<\*>) to see all help|"
                     r"(?:\d+|<\*>) more process(?:es)? ha(?:s|ve) sent help message|^Exception ignored in: |"
                     r"^usually indicates a failure in the peer process|^\(it may even hang or crash\), the root cause of "
                     r"this problem is|^failure of the peer -- that is what you need to investigate|"
                     r"^generally: such peer hangups are frequently caused by")


# --- nodes: which node the failure began on -----------------------------------------------------------------------

# weights of the node signals (each in 0..1); a node's evidence is their weighted sum, its score 1 - exp(-sum)
_NODE_WEIGHTS = {"exclusive": 0.9, "missing": 0.85, "silent": 0.7, "named": 0.6, "first": 0.5}
ROOT_MIN = 0.5  # a node is where the failure began when its score is at least this...
ROOT_NEAR = 0.75  # ...and its evidence at least this share of the top node's


class _NodeEvidence:
    def __init__(self, hosts: list[str]) -> None:
        self.signal: dict[str, dict[str, float]] = {h: {} for h in hosts}
        self.reasons: dict[str, list[str]] = {h: [] for h in hosts}
        self.events: dict[str, list[str]] = {h: [] for h in hosts}

    def add(self, host: str, signal: str, value: float, reason: str, event: str | None = None) -> None:
        if host not in self.signal or value <= 0:
            return
        if value > self.signal[host].get(signal, 0.0):
            self.signal[host][signal] = value
        self.reasons[host].append(reason)
        if event:
            self.events[host].append(event)

    def suspects(self) -> list[NodeSuspect]:
        out = []
        for host, signals in self.signal.items():
            if not signals:
                continue
            evidence = sum(_NODE_WEIGHTS[name] * min(value, 1.0) for name, value in signals.items())
            out.append(NodeSuspect(host=host, score=round(1.0 - math.exp(-evidence), 3),
                                   reasons=_dedup(self.reasons[host])[:6], events=_dedup(self.events[host])[:10],
                                   signals=sorted(signals)))
        out.sort(key=lambda n: (-n.score, n.host))
        return out


def _mentions(text: str, own: str | None, names: dict[str, str]) -> set[str]:
    """The other hosts a line names (by host name or IP)."""
    found = set()
    for token in _NAME_TOKEN.findall(text):
        host = names.get(token)
        if host is not None and host != own:
            found.add(host)
    return found


_NAME_TOKEN = re.compile(r"[A-Za-z0-9][\w.-]*[A-Za-z0-9]|\d")
_NUMBER = re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-fA-F]*\d[0-9a-fA-F]*\b|\d+")  # (a bus id '3b000', a pointer)
MAX_ODD_ONES_OUT = 5


def _odd_ones_out(scan: LogScan, names: dict[str, str]) -> list[OddOneOut]:
    """The info and warning lines that three or more nodes print alike but one, their prefixes aside and what differs
    from node to node by design (node names and addresses, numbers) masked: a node set up unlike the rest (NCCL
    bootstrapping over docker0 where the others use ib0, incident fabric-nccl-ifname-docker0-4node; as ByteRobust
    compares a job's machines with each other). Errors are the events' to weigh; first the shortest lines."""
    def masked(text: str) -> str:
        message = split_header(text).message
        return _NUMBER.sub("#", _NAME_TOKEN.sub(lambda m: "<h>" if m.group(0) in names else m.group(0), message))

    out = []
    for tid, per_host in scan.first.items():
        t = scan.templates[tid]
        if len(per_host) < 3 or t.level >= LEVEL_RANK["error"] or _is_structure(t):
            continue
        groups: dict[str, list[str]] = {}
        for host, occ in per_host.items():
            groups.setdefault(masked(occ.text), []).append(host)
            if len(groups) > 2:
                break
        if len(groups) != 2:
            continue
        (odd_text, odd), (usual_text, usual) = sorted(groups.items(), key=lambda kv: len(kv[1]))
        if len(odd) == 1:
            mine = set(odd_text.split())
            instead = [w for w, m in zip(split_header(per_host[usual[0]].text).message.split(), usual_text.split())
                       if m not in mine]
            out.append(OddOneOut(odd=_location(per_host[odd[0]], odd[0]), usual=_location(per_host[usual[0]], usual[0]),
                                 alike=len(usual), instead=" ".join(instead)[:120]))
    return sorted(out, key=lambda o: len(o.odd.text))[:MAX_ODD_ONES_OUT]


def _node_evidence(scan: LogScan, cands: list[_Candidate], names: dict[str, str]) -> list[NodeSuspect]:
    hosts = scan.hosts_with_logs
    n = len(hosts)
    ev = _NodeEvidence(hosts)
    errors = [c for c in cands if c.kind != "context"]
    level_w = {2: 0.45, 3: 0.9, 4: 1.0}
    named_by: dict[str, set[str]] = {}
    for c in errors:
        for h, occ in c.per_host.items():
            for other in _mentions(occ.text, h, names):
                named_by.setdefault(other, set()).add(h)
    for c in errors:
        if c.kind != "primary":
            continue
        k = len(c.per_host)
        excl = (1.0 if k < n else 0.0) if n <= 2 else max(0.0, 1.0 - (k - 1) / (0.5 * n))
        if n == 1:
            excl = 1.0
        for h, occ in c.per_host.items():
            about_other = 0.5 if _mentions(occ.text, h, names) else 1.0  # a line naming another node is half about it
            if excl > 0:
                ev.add(h, "exclusive", level_w.get(c.t.level, 0.5) * excl * about_other,
                       f"shows '{_short(c.t.text)}'" + (" (no other node does)" if k == 1 and n > 1 else ""), c.t.id)
    _missing_from_cascade(hosts, errors, ev)
    _first_errors([c for c in errors if c.phase == "late"], ev)
    if named_by:
        ranked = sorted(named_by.items(), key=lambda kv: -len(kv[1]))
        top = len(ranked[0][1])
        leaders = [h for h, by in ranked if len(by) == top]
        if len(leaders) < max(2, len(named_by)):
            for h in leaders:
                ev.add(h, "named", 1.0 / len(leaders), f"named in the errors of {top} other node(s)")
    _silent_nodes(scan, ev)
    return ev.suspects()


def _missing_from_cascade(hosts: list[str], errors: list[_Candidate], ev: _NodeEvidence) -> None:
    """The node that never reported what (almost) every other node did: the timeout of a collective it hung in.
    A node that reported the failure its own way (its peer's loss, its own kill) is not missing from it."""
    n = len(hosts)
    widespread = [c for c in errors if c.host_share >= 0.5 and len(c.per_host) < n]
    if n < 3 or not widespread:
        return
    reported = {h for c in errors if c.kind == "cascade" and c.phase == "late" for h in c.per_host}
    lacking = {h: [c for c in widespread if h not in c.per_host] for h in hosts if h not in reported}
    share = {h: len(cs) / len(widespread) for h, cs in lacking.items()}
    odd = [h for h, v in share.items() if v >= 0.5]
    if not odd or len(odd) > max(1, n // 10):
        return
    for h in odd:
        what = lacking[h][0]
        ev.add(h, "missing", share[h], f"lacks {len(lacking[h])} of the {len(widespread)} errors most other nodes "
               f"print, e.g. '{_short(what.t.text)}'", what.t.id)


BURST_GAP_S = 30.0  # errors further apart than this belong to different bursts (the root's, then the cascade's)


def _first_errors(errors: list[_Candidate], ev: _NodeEvidence) -> None:
    """The node(s) whose errors (by their own printed time) came in a first burst that few nodes share."""
    first: dict[str, float] = {}
    for c in errors:
        for h, occ in c.per_host.items():
            if occ.ts is not None and occ.ts_exact and occ.ts < first.get(h, math.inf):
                first[h] = occ.ts
    if len(first) < 2:
        return
    ordered = sorted(first.items(), key=lambda kv: kv[1])
    burst = [ordered[0]]
    for h, t in ordered[1:]:
        if t - burst[-1][1] > BURST_GAP_S:
            break
        burst.append((h, t))
    if len(burst) == len(ordered) or len(burst) > max(1, len(ordered) // 4):
        return
    lag = ordered[len(burst)][1] - ordered[0][1]
    for i, (h, t) in enumerate(burst):
        ev.add(h, "first", 1.0 / (i + 1), f"among the first errors, {ordered[len(burst)][1] - t:.0f}s before "
               f"the other nodes'" if i else f"its error came first, {lag:.0f}s before the other nodes'")


def _silent_nodes(scan: LogScan, ev: _NodeEvidence) -> None:
    """Nodes whose logs end well before the others' (a crash or a hang stops a node's logging)."""
    last: dict[str, float] = {}
    for f in scan.files:
        if f.host is not None and f.last_ts is not None:
            last[f.host] = max(last.get(f.host, f.last_ts), f.last_ts)
    if len(last) < 3:
        return
    values = sorted(last.values())
    med = statistics.median(values)
    mad = statistics.median(abs(v - med) for v in values) or 0.0
    gap = max(60.0, 5.0 * mad)
    silent = [h for h, v in last.items() if v < med - gap]
    if not silent or len(silent) > max(1, len(last) // 10):
        return
    for h in silent:
        ev.add(h, "silent", 1.0, f"its logs end {med - last[h]:.0f}s before the other nodes'")


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def _dedup(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --- roles: cause, symptom, context --------------------------------------------------------------------------------


def _roots(nodes: list[NodeSuspect]) -> set[str]:
    """The node(s) the failure began on, when some stand out; none when the failure looks the same everywhere."""
    if not nodes or nodes[0].score < ROOT_MIN:
        return set()
    top = -math.log(1.0 - min(nodes[0].score, 0.999))
    return {n.host for n in nodes if n.score >= ROOT_MIN and -math.log(1.0 - min(n.score, 0.999)) >= ROOT_NEAR * top}


def _assign_roles(cands: list[_Candidate], roots: set[str], hosts_total: int) -> None:
    """Causes: the errors on the node(s) the failure began on (all errors when none stands out), the exception a
    traceback ends with first; symptoms: the cascade, and errors only other nodes show; the rest is context."""
    for c in cands:
        if c.kind == "context":
            c.role = "context"
        elif c.kind == "cascade":
            c.role = "symptom"
            c.score *= 0.3
            c.why.append("a timeout, lost peer or kill: the cascade")
        elif roots and not roots & set(c.per_host):
            c.role = "symptom"
            c.score *= 0.3
            c.why.append("only on other nodes than " + ", ".join(sorted(roots)))
        elif roots and c.host_share >= 0.5 and hosts_total > 2 and not (c.t.exception and roots & set(c.per_host)):
            # (an exception that ends the tracebacks of the root node(s) too is the job's own failure on every node,
            # whatever else stands out there: a checkpoint save's 'OSError: [Errno 122] Disk quota exceeded' on every
            # rank, beside the Kubernetes events saved with one node's logs)
            c.role = "symptom"
            c.score *= 0.3
            c.why.append("on most nodes, not particular to " + ", ".join(sorted(roots)))
        elif c.t.level < LEVEL_RANK["error"] and not roots & set(c.per_host):
            c.role = "context"  # a warning on no node that stands out: noise more often than not
        else:
            c.role = "cause"
    # an error line most of whose words an exception line repeats is that exception logged again: context. Other
    # error lines beside an exception stay causes: the DataLoader's "ERROR: Unexpected bus error encountered in
    # worker. This might be caused by insufficient shared memory (shm)." names what its exception does not
    # (dev:tts-135, dev:pangeo-docker-images-258: "RuntimeError: unable to write to file </torch_1394_...>")
    causes = [c for c in cands if c.role == "cause"]
    shaped = [c for c in causes if c.t.kinds & K_EXCEPTION]
    for c in causes:
        if not c.t.exception and any(e is not c and _restates(c.t.text, e.t.text) for e in shaped):
            c.role = "context"
            c.why.append("an exception line says the same")
    _first_of_runs([c for c in cands if c.role == "cause"], roots)
    top = max((c.score for c in cands if c.role == "cause"), default=0.0)
    for c in cands:
        if c.role == "cause" and c.score < 0.4 * top:
            c.role = "context"
            c.why.append("much weaker than the main cause")
    if not roots and not any(c.role == "cause" for c in cands):
        _only_the_cascade(cands)
    if not any(c.role == "cause" for c in cands):
        _only_the_trail(cands)
    cause_ids = {c.t.id for c in cands if c.role == "cause" and c.t.exception and c.kind == "primary"}
    for c in cands:
        if c.t.details & cause_ids and (not roots or roots & set(c.per_host)):
            c.role = "cause"
            c.why.append("details the exception")


ONLY_CASCADE_CAUSES = 3
# torchrun's failure summary around the lines that matter (exitcode, `traceback : Signal 9 (SIGKILL)`): its header,
# its empty exception line, and its placeholders say nothing of their own (torch.distributed.elastic's documented
# ChildFailedError output)
_LAUNCHER_BOILERPLATE = re.compile(r"ChildFailedError:?\s*$|^\s*Failures:\s*$|" + ELASTIC_SUMMARY_PLACEHOLDERS)


def _only_the_cascade(cands: list[_Candidate]) -> None:
    """No error of its own anywhere and no node that stands out (a silent one would be the root): the timeouts, lost
    peers and kills are all the log says about the failure (a partial paste, one rank's log, a hang), so its
    strongest lines are what to cite. Seen in dev:openrlhf-624 (only the watchdog's collective timeout) and
    dev:trl-3408 (only the TCPStore client's connect timeout)."""
    cascade = sorted((c for c in cands if c.role == "symptom" and c.kind == "cascade"
                      and c.t.level >= LEVEL_RANK["warning"] and not _LAUNCHER_BOILERPLATE.search(c.t.text)),
                     key=lambda c: -c.score)
    for c in cascade[:ONLY_CASCADE_CAUSES]:
        c.role = "cause"
        c.score /= 0.3
        c.why.append("no root error anywhere: the failure as the log shows it")


def _only_the_trail(cands: list[_Candidate]) -> None:
    """No error line but NCCL's error trail: the failure with no WARN to say what it was (a paste of NCCL's INFO lines
    only: 'NCCL INFO misc/socket.cc:567 -> 2', then 'bootstrap.cc:270 -> 2', dev:nccl-1000). Where it went first is
    what there is to cite."""
    trail = [c for c in cands if c.role == "context" and _NCCL_TRAIL.search(c.t.text)]
    if any(c.t.level >= LEVEL_RANK["warning"] for c in cands if c not in trail):
        return  # a warning elsewhere says more (NCCL's 'WARN Duplicate GPU detected' before its trail, dev:accelerate-2246)
    for c in trail[:1]:
        c.role = "cause"
        c.why.append("NCCL's error trail, with no WARN to say what the error was")


def _first_of_runs(causes: list[_Candidate], roots: set[str]) -> None:
    """An error line that restates the error line just before it (most of its words are that line's) reports the
    same failure again: context. An exception line keeps its role: it is the focus of its traceback."""
    cited = {id(c): _cited_on(c, roots) for c in causes}
    by_line = {(cited[id(c)].file, cited[id(c)].line): c for c in causes}
    for c in causes:
        occ = cited[id(c)]
        before = by_line.get((occ.file, occ.line - 1))
        if before is not None and not c.t.exception and _restates(c.t.text, before.t.text) \
                and not RAISE_STATEMENT.match(split_header(before.t.text).message):
            c.role = "context"
            c.why.append("restates the error on the line before")


_WORD = re.compile(r"[A-Za-z]{2,}")


def _restates(text: str, before: str) -> bool:
    words, earlier = set(_WORD.findall(text)), set(_WORD.findall(before))
    return bool(words) and len(words & earlier) >= 0.6 * len(words)


def _cited_on(c: _Candidate, roots: set[str]) -> Occurrence:
    """The occurrence to cite: on a root node (when the event is there), preferring a file that logs progress (the
    main log, where a reader looks first); else in such a file on any node; else the earliest."""
    on_roots = [h for h in c.hosts if h in roots]
    for hosts in (on_roots, [] if on_roots else c.hosts):
        for h in hosts:
            for occ in (c.per_host[h], *c.in_files.get(h, ())):
                if occ.file in c.main_files:
                    return occ
    return c.per_host[on_roots[0]] if on_roots else c.earliest


def _host_of(c: _Candidate, occ: Occurrence) -> str:
    return next(h for h in c.hosts if c.per_host[h] is occ or occ in c.in_files.get(h, ()))


# --- the pipeline -------------------------------------------------------------------------------------------------


def analyze_logs(bundle: Bundle, pool: NormalPool | None = None, *, workers: int | None = None,
                 budget: Budget | None = None, runner: Workers | None = None, fast: bool | None = None,
                 compiled: bool | None = None) -> LogFindings:
    """L4 on a bundle's logs. `pool`: templates of successful jobs (see `normal_pool_for`); `workers`: processes
    that read the logs (default: one, or every core for a large bundle), or `runner`: where they are read (a shared
    process pool, Ray); `budget`: no file is started past it."""
    scan = scan_bundle(bundle, workers, deadline=budget.deadline() if budget is not None else None, runner=runner,
                       fast=fast, compiled=compiled)
    if scan.unread and budget is not None:
        budget.stop(scan.unread[0], len(scan.unread))
    return findings_from_scan(scan, bundle.job.status, pool, host_names(bundle))


def host_names(bundle: Bundle) -> dict[str, str]:
    """Every name a log line may use for a node of the job (host name, IP) -> the host."""
    names = {n.host: n.host for n in bundle.job.nodes}
    names.update(bundle.job.ip_to_host)
    return names


def findings_from_scan(scan: LogScan, status: str = "failed", pool: NormalPool | None = None,
                       names: dict[str, str] | None = None) -> LogFindings:
    notes: list[str] = []
    if not scan.files:
        notes.append("no logs in this bundle")
    if pool is None or not pool.jobs:
        notes.append("no history jobs: cross-job filtering skipped")
    else:
        notes.append(f"cross-job filtering against {len(pool.jobs)} successful job(s)")
    hosts_total = len(scan.hosts_with_logs)
    files = {f.file: f for f in scan.files}
    tl = _timeline(scan.files)
    tl.first_error_ts = _first_error_ts(scan)
    cands = []
    main_files = {f.file for f in scan.files if f.last_iteration is not None}
    for tid, t in scan.templates.items():
        per_host = scan.first.get(tid, {})
        if per_host:
            c = _Candidate(t, per_host, hosts_total, scan.in_files.get(tid), main_files)
            _classify(c, tl, files, pool, hosts_total)
            cands.append(c)
    nodes = _node_evidence(scan, cands, names or {})
    roots = _roots(nodes)
    _assign_roles(cands, roots, hosts_total)
    has_errors = any(c.role == "cause" and c.t.level >= LEVEL_RANK["error"] for c in cands)
    # a lasting slowdown is evidence in a slow job, or where no error is (as it is an iteration: _iterations)
    slow_counts = status == "slow" or not has_errors
    # (cited; where the iterations turned slow stays the windowed check's to say, which needs the slowdown to last)
    onset = _first_slow_steps(scan.files) if status == "slow" and tl.slow_from is None else []
    anomalies = sorted([*(_anomaly(m) for f in scan.files for m in f.metrics
                          if m.kind != "step_time_slowdown" or slow_counts),
                        *(_data_bound(scan.files) if status == "slow" else []), *onset], key=_decisive_first)
    events = _ranked_events(cands, roots, anomalies, scan)
    top_cause = next((c for c in sorted(cands, key=lambda c: -c.score) if c.role == "cause"), None)
    cited = _cited_on(top_cause, roots) if top_cause else None
    stage = _frames_stage(list(cited.frames), tl) if cited is not None and cited.frames else None
    if stage == "training" and not names_a_stage(list(cited.frames)) and _stage_at(scan, cited, tl) == "eval":
        # frames that show only the model running (train_func -> forward, no step named) run in an evaluation too:
        # the job's markers say which (Ray Train's 'running evaluation' and Eval bar before an Xid 79 in forward,
        # incident raytrain-crlf-xid79-eval-2node)
        stage = "eval"
        notes.append("stage from the job's markers, the traceback's functions showing only the model running: eval")
    elif stage is not None:
        notes.append(f"stage from the functions of the traceback: {stage}")
    cut = [f for f in scan.files if f.cut_traceback is not None]
    cut_stage = _frames_stage(list(cut[0].cut_traceback[2]), tl) if cut else None  # type: ignore[index]
    if stage is None and cut_stage is not None and cited is not None and _chained(scan, cited, cut[0]):
        # the cause's own frames say nothing, and the outer traceback of its chained exception ("The above exception
        # was the direct cause of the following exception:"), cut before its own exception, says where the job was:
        # its caller's frames (a JIT build's CalledProcessError under Trainer.train -> init_deepspeed ->
        # deepspeed.initialize, dev:deepspeedexamples-103)
        stage = cut_stage
        notes.append(f"stage from the functions of a traceback cut before its exception: {stage}")
    if stage is None and (top_cause is not None or cut_stage is None):  # (with no cause but a cut traceback, its
        # frames say where the job was better than its last marker: Trainer's evaluate under a training bar at 85%,
        # dev:mle-llama-2)
        stage = _stage_at(scan, cited, tl)
    if tl.first_nan is not None and top_cause is None:
        stage = "training"
    if stage is None and cut_stage is not None:
        stage = cut_stage
        notes.append(f"stage from the functions of a traceback cut before its exception: {stage}")
    dumps = _main_threads(scan.files)
    if stage is None and dumps:
        stage = stage_of_frames([fn for _, _, fn in reversed(dumps[0][1].frames)])  # type: ignore[assignment]
        if stage is not None:
            notes.append(f"stage from the functions of a stack dump in the logs: {stage}")
    if stage is None and cited is None:  # no cause line: what the job last said it was doing (a hang's progress bar)
        said = [(f.lines, line, word_stage) for f in scan.files for line, word_stage, _ in f.word_stages[-1:]]
        stage = max(said)[2] if said else None
        if stage is not None:
            notes.append(f"stage from the job's last words: {stage}")
    last_good, first_abnormal, it_notes = _iterations(tl, status, has_errors, stage)
    notes.extend(it_notes)
    if stage == "checkpoint" and first_abnormal is None and cited is not None:
        said = [(line, text) for f in scan.files if f.file == cited.file
                for line, word_stage, text in f.word_stages if word_stage == "checkpoint" and line <= cited.line]
        named = next(((line, step) for line, text in [(cited.line, cited.text), *reversed(said)]
                      if (step := saved_step(text)) is not None), None)
        if named is not None:  # no progress line: the step the checkpoint being saved is named for completed
            last_good, first_abnormal = named[1], named[1] + 1
            notes.append(f"failed saving the checkpoint of step {named[1]} ({cited.file}:{named[0]})")
    if scan.lines_skipped:
        notes.append(f"{scan.lines_skipped} corrupt line(s) skipped")
    not_utf8 = _not_utf8(events)
    if not_utf8:
        shown = ", ".join(f"{f}:{n}" for f, n in not_utf8[:3]) + (", ..." if len(not_utf8) > 3 else "")
        notes.append(f"{len(not_utf8)} of the log events' lines hold bytes that are not UTF-8, shown as \ufffd "
                     f"({shown})")
    notes.extend(scan.issues[:20])
    last_progress, last_line = _last_activity(scan.files)
    last_said = _said_before(scan.files, cited)
    where = [LogLocation(file=f.file, line=_stuck_in(t)[0], host=f.host, rank=f.rank, text=_stuck_in(t)[1])
             for f, t in dumps[:MAX_THREAD_DUMPS]]
    cut_at = [LogLocation(file=f.file, line=f.cut_traceback[0], end_line=f.frame_code.get(f.cut_traceback[0]),
                          host=f.host, rank=f.rank, text=f.cut_traceback[1])
              for f in cut[:MAX_THREAD_DUMPS] if f.cut_traceback is not None]
    failed = next(((f, f.launcher_failure) for f in scan.files if f.launcher_failure is not None
                   and (f.launcher_failure.rank is not None or f.launcher_failure.host)), None)
    return LogFindings(events=events, nodes=nodes, stage=stage, last_good_iteration=last_good,
                       last_progress=last_progress, last_line=last_line, last_said=last_said, thread_dumps=where,
                       cut_tracebacks=cut_at, silent_first=_silent_first(scan.files),
                       launcher_failure=failed[1].describe() if failed else None,
                       launcher_failure_at=LogLocation(file=failed[0].file, line=failed[1].line, host=failed[0].host)
                       if failed else None, odd_ones_out=_odd_ones_out(scan, names or {}),
                       first_abnormal_iteration=first_abnormal, slow_from_iteration=tl.slow_from,
                       resumed_from=tl.resume_step,
                       metric_anomalies=anomalies, lines_read=scan.lines_read, lines_skipped=scan.lines_skipped,
                       templates=len(scan.templates), hosts_with_logs=hosts_total, notes=notes)


MAX_THREAD_DUMPS = 8


def _not_utf8(events: list[LogEvent]) -> list[tuple[str, int]]:
    """The distinct lines the events report (first, on other ranks, last, raising frames) that hold bytes that were
    not UTF-8 (decoded to U+FFFD), as (file, line)."""
    lines = {(loc.file, loc.line) for e in events
             for loc in (e.first, *e.also, e.last, e.raised_at, e.raised_in)
             if loc is not None and "\ufffd" in loc.text}
    return sorted(lines)


def _main_threads(files: list[FileSummary]) -> list[tuple[FileSummary, ThreadDump]]:
    """The main thread of each stack dump in the logs (py-spy's "MainThread", faulthandler's "Current thread"; else a
    file's last thread, where faulthandler prints the main one), those stuck somewhere the majority is not first."""
    threads = []
    for f in files:
        dumped = [t for t in f.thread_dumps if t.frames]
        threads += [(f, t) for t in ([t for t in dumped if t.main] or dumped[-1:])]
    innermost = Counter(_stuck_in(t)[2] for _, t in threads)
    usual, count = innermost.most_common(1)[0] if threads else (None, 0)
    usual = usual if count > len(threads) / 2 else None  # a majority stuck in one place: the others stand out
    return sorted(threads, key=lambda ft: _stuck_in(ft[1])[2] == usual)


# the standard library's waiting frames (threading.py's wait, a multiprocessing pipe's _recv) say a thread waits, not
# on what: the frame that called them does ("all_reduce (torch/distributed/distributed_c10d.py:2050)")
_STDLIB_FRAME = re.compile(r"(?:^|[\s(/])(?:threading|queue|selectors|socket|subprocess|time)\.py[:\"]|"
                           r"(?:multiprocessing|concurrent/futures|asyncio)/|/lib/python3\.\d+/(?!site-|dist-)")


def _stuck_in(t: ThreadDump) -> tuple[int, str, str]:
    """The frame a thread was stuck in: its innermost one outside the standard library's waits."""
    return next((fr for fr in t.frames if not _STDLIB_FRAME.search(fr[1])), t.frames[0])


def _silent_first(files: list[FileSummary]) -> list[LogLocation]:
    """In each file whose ranks' last lines part (two ranks or more, ending on different lines): the last line of the
    rank that printed last the earliest, the file's own last line aside."""
    out = []
    for f in files:
        if len(f.last_by_rank) < 2:
            continue
        rank, (line, text) = min(f.last_by_rank.items(), key=lambda kv: (kv[1][0], kv[0]))
        if line != f.last_line:
            out.append(LogLocation(file=f.file, line=line, host=f.host, rank=rank, text=text))
    return out[:MAX_THREAD_DUMPS]


def _last_activity(files: list[FileSummary]) -> tuple[LogLocation | None, LogLocation | None]:
    """The newest progress line of any file, and the last line of the file that printed last (by its last time,
    else the longest file: the main log)."""
    progress = [f for f in files if f.last_iteration_text]
    last_progress = None
    if progress:
        f = max(progress, key=lambda f: (f.last_iteration_ts or -math.inf, f.last_iteration or 0, f.lines))
        last_progress = LogLocation(file=f.file, line=f.last_progress_line, host=f.host, rank=f.rank,
                                    ts=f.last_iteration_ts, text=f.last_iteration_text)
    printed = [f for f in files if f.last_text]
    last_line = None
    if printed:
        f = max(printed, key=lambda f: (f.last_ts or -math.inf, f.lines))
        last_line = LogLocation(file=f.file, line=f.last_line, host=f.host, rank=f.rank, text=f.last_text)
    return last_progress, last_line


SAID_WITHIN = 200  # lines: what the job said it was doing counts this close before the failure


def _said_before(files: list[FileSummary], occ: Occurrence | None) -> LogLocation | None:
    """The last line before the cited cause, in its file, whose words say what the job was doing ("Saving model and
    optim state...", dev:olmo-788): a line at the margin, not a traceback's frame or source line."""
    f = next((f for f in files if occ is not None and f.file == occ.file), None)
    if f is None or occ is None:
        return None
    for line, _, text in reversed(f.word_stages):
        parsed = split_header(text)
        if occ.line - SAID_WITHIN <= line < occ.line and not parsed.indented and line_kind(parsed.message) == "other":
            return LogLocation(file=f.file, line=line, host=f.host, rank=f.rank, text=text)
    return None


def _location(occ: Occurrence, host: str | None) -> LogLocation:
    return LogLocation(file=occ.file, line=occ.line, end_line=occ.end_line, host=host, rank=occ.rank, ts=occ.ts,
                       ts_exact=occ.ts_exact, iteration=occ.iteration, text=occ.text)


def _data_bound(files: list[FileSummary]) -> list[MetricAnomaly]:
    """A slow job's steps waiting on their data: the first slow step of a file, else its longest step (a stall the
    window could not call a slowdown: batch 9 of 13 at 12.9 s, 12.5 s of it data, dev:yet-another-efficientdet-pytorch-
    322), else its last progress line, where it prints the step's data time beside its whole time and the data time is
    most of it (logparse.data_bound)."""
    out = []
    for f in files:
        slow = [(m.line, m.iteration, m.text) for m in f.metrics if m.kind == "step_time_slowdown"]
        longest = [(f.slowest_step[1], None, f.slowest_step[2])] if f.slowest_step is not None else []
        for line, iteration, text in [*slow, *longest, (f.last_progress_line, f.last_iteration, f.last_iteration_text)]:
            wait = data_bound(text)
            if wait is not None:
                out.append(MetricAnomaly(kind="data_loading_bound", iteration=iteration, value=wait[0],
                                         previous=wait[1], location=LogLocation(file=f.file, line=line, host=f.host,
                                                                                rank=f.rank, text=text)))
                break
    return out[:2]


def _first_slow_steps(files: list[FileSummary]) -> list[MetricAnomaly]:
    """A slow job whose pasted steps are too few for the windowed check (logscan._slowdown): each file's first step
    well past the fastest before it, the most slowed first (MXNet's Speedometer at 429.55 then 75.35 samples/sec,
    dev:mxnet-4804; TensorFlow's 71.1 then 25.3 examples/sec a step after, dev:tensorflow-2987)."""
    out = [MetricAnomaly(kind="step_time_slowdown", iteration=it, value=step, previous=fastest,
                         location=LogLocation(file=f.file, line=line, host=f.host, rank=f.rank, text=text))
           for f in files if f.first_slow_step is not None for step, fastest, line, text, it in [f.first_slow_step]]
    return sorted(out, key=_slowed, reverse=True)[:2]


def _slowed(a: MetricAnomaly) -> float:
    return a.value / a.previous if a.value and a.previous else 0.0


def _decisive_first(a: MetricAnomaly) -> tuple[int, float]:
    """What a metric anomaly proves, most first: a non-finite loss or grad norm (the divergence itself), a count of
    NaN iterations, a straggler report or steps waiting on their data (why steps are slow), then a jump (a spike that
    precedes a divergence, or passes) or the first slow step."""
    kind = 0 if a.kind.startswith(NOT_FINITE) else 1 if a.kind == "nan_iterations" \
        else 2 if a.kind in ("straggler_rank", "data_loading_bound") else 3
    return kind, a.iteration if a.iteration is not None else math.inf


def _anomaly(m: MetricEvent) -> MetricAnomaly:
    return MetricAnomaly(kind=m.kind, iteration=m.iteration, value=None if m.value is None or math.isnan(m.value)
                         or math.isinf(m.value) else m.value, previous=m.previous,
                         location=LogLocation(file=m.file, line=m.line, host=m.host, text=m.text))


_SIGNAL_FRAME = re.compile(r"sigaction|signal[ _]handler|__restore_rt|\bin (?:raise|abort|killpg?)\b")


def _last_on(scan: LogScan, c: _Candidate, occ: Occurrence, host: str) -> LogLocation | None:
    """The template's last line on the cited host, when it came after the cited one: a repeated warning's last value
    (apex's 'reducing loss scale to 0.5' after '... to 32768.0', dev:apex-834)."""
    last = scan.last.get(c.t.id, {}).get(host)
    if last is None or (last.file, last.line) <= (occ.file, occ.line):
        return None
    return _location(last, host)


def _ranked_events(cands: list[_Candidate], roots: set[str], anomalies: list[MetricAnomaly], scan: LogScan,
                   ) -> list[LogEvent]:
    order = {"cause": 0, "symptom": 1, "context": 2}
    # a frame printed right after a fatal line that is no exception: the crash's stack, innermost first, and where it
    # crashed is a cause beside it (dev:megatron-bridge-2355, '!!!!!!! Segfault encountered !!!!!!!' then
    # 'File "<unknown>", line 0, in crc32_16bytes(...)')
    frame_at = {(o.file, o.line): (c, o.text) for c in cands if c.t.kinds & K_FRAME for o in c.per_host.values()}
    for c in [c for c in cands if c.role == "cause" and c.t.level >= LEVEL_RANK["fatal"] and not c.t.exception]:
        occ = _cited_on(c, roots)
        at = next((frame_at[k] for k in ((occ.file, occ.line + 1), (occ.file, occ.line + 2)) if k in frame_at
                   and not _SIGNAL_FRAME.search(frame_at[k][1])), None)  # (past the handler that caught the signal)
        frame = at[0] if at is not None else None
        if frame is not None and frame.role == "context":
            frame.role, frame.score = "cause", c.score * 0.9
            frame.why.append("where the fatal line above it crashed")
    cands = sorted(cands, key=lambda c: (order[c.role], -round(c.score, 4), _occ_key(_cited_on(c, roots)), c.t.id))
    frame_code = {f.file: f.frame_code for f in scan.files}
    message_end = {f.file: f.message_end for f in scan.files}
    progress_end = {f.file: f.last_progress_line for f in scan.files}
    progress_end_ts = max((f.last_iteration_ts for f in scan.files if f.last_iteration_ts is not None), default=None)

    def trained_after(c: _Candidate, o: Occurrence) -> bool:
        return c.phase == "startup" and (progress_end.get(o.file, 0) > o.line or bool(
            o.ts_exact and o.ts is not None and progress_end_ts is not None and progress_end_ts > o.ts))

    def code_of(file: str, frame_line: int) -> int | None:
        return frame_code.get(file, {}).get(frame_line)

    def located(o: Occurrence, h: str | None) -> LogLocation:  # an exception cited with its message's lines
        loc, end = _location(o, h), message_end.get(o.file, {}).get(o.line)
        return loc if end is None or (loc.end_line or 0) >= end else loc.model_copy(update={"end_line": end})

    out = []
    for c in cands:
        occ = _cited_on(c, roots)
        host = _host_of(c, occ)
        hosts = [host] + [h for h in c.hosts if h != host]
        ranks = sorted({o.rank for o in c.per_host.values() if o.rank is not None})
        also = []
        if c.role == "cause" and host in roots:
            others = [o for o in c.in_files.get(host, []) if o.file != occ.file]
            host_files = sum(1 for f in scan.files if f.host == host)
            if len(others) + 1 <= max(1, host_files // 2):  # the same error on a few other ranks of the root node
                also = [located(o, host) for o in others]
            if set(c.per_host) <= roots and len(c.per_host) <= 4:  # and on the other root nodes
                also += [located(c.per_host[h], h) for h in c.hosts if h != host]
        raised_at = None
        if occ.raised_at is not None:
            raised_at = LogLocation(file=occ.file, line=occ.raised_at[0], end_line=code_of(occ.file, occ.raised_at[0]),
                                    host=host, rank=occ.rank, ts=occ.ts,
                                    text=occ.raised_at[1])  # printed just before the exception: its time
        raised_in = None
        if occ.innermost is not None:
            raised_in = LogLocation(file=occ.file, line=occ.innermost[0], end_line=code_of(occ.file, occ.innermost[0]),
                                    host=host, rank=occ.rank, ts=occ.ts,
                                    text=occ.innermost[1])
        out.append(LogEvent(id=c.t.id, template=c.t.text, count=c.t.count, hosts=hosts[:32],
                            host_count=len(c.per_host), ranks=ranks[:64], first=located(occ, host), also=also,
                            raised_at=raised_at, raised_in=raised_in, last=_last_on(scan, c, occ, host),
                            before=None if occ.before is None else LogLocation(
                                file=occ.file, line=occ.before[0], host=host, rank=occ.rank, text=occ.before[1]),
                            level=_LEVELS[c.t.level] if c.t.level >= 0 else None, score=round(c.score, 4),
                            why="; ".join(c.why), role=c.role, stage=occ.stage,  # type: ignore[arg-type]
                            trained_after=trained_after(c, occ), normal_share=c.normal_share))
    bad = [a for a in anomalies if a.kind.startswith(NOT_FINITE)]
    if bad:  # the first NaN/inf is the cause-indicating line of a divergence
        first = min(bad, key=lambda a: (a.iteration if a.iteration is not None else math.inf, a.location.line))
        top = out[0].score if out and out[0].role == "cause" else 1.0
        out.insert(0, LogEvent(id="metric:" + first.kind, template=f"{first.kind.replace('_', ' ')} at iteration "
                               f"{first.iteration}", count=len(bad), hosts=[h for h in [first.location.host] if h],
                               host_count=len({a.location.host for a in bad}), first=first.location, level="error", score=round(max(top, 1.0), 4),
                               why="the first non-finite loss or grad norm", role="cause", stage="training"))
    return out
