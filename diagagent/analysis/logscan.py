"""One streaming pass over a bundle's logs: per host, how often each template occurs and where it first did;
per file, progress (iterations, loss, step time) and stage transitions. Large bundles are read by several processes.

Memory stays flat in the size of the logs: files are read in blocks, and only counts and first occurrences are kept.
"""

from __future__ import annotations

import hashlib
import math
import re
import statistics
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np

from diagagent.analysis.logblocks import BlockShapes, ShapeColumns, block_wrapping, line, no_jump, no_slowdown
from diagagent.analysis.logparse import (
    LEVEL_RANK,
    LauncherFailure,
    Progress,
    ProgressLayout,
    StragglerReport,
    frame_function,
    is_bad_number,
    line_kind,
    mpirun_failure,
    names_pattern,
    progress_layout,
    read_launcher_field,
    read_progress,
    read_progress_with,
    read_straggler_report,
    resume_step,
    split_header,
    stage_of_words,
)
from diagagent.analysis.templates import (
    BLANK,
    CORRUPT,
    HEX_SHAPE_TABLE,
    K_CARET,
    K_DUMP,
    K_ERROR_HEAD,
    K_ERROR_WORDS,
    K_EXCEPTION,
    K_FRAME,
    K_HEADER,
    K_INDENTED,
    K_ITERATION,
    K_MARKER_MASK,
    K_SKIP,
    K_TRACEBACK,
    K_WARNING_WORDS,
    MARKERS,
    OVERFLOW,
    SHAPE_TABLE,
    LineShaper,
    TemplateMiner,
    shape_of,
    template_id,
)
from diagagent.analysis.workers import Workers
from diagagent.analysis.wrapping import Wrapping, carry_from, unwrap, wrapping_of
from diagagent.config import Settings
from diagagent.telemetry import Bundle, LogFile, ReadIssue, parse_timestamp
from diagagent.telemetry.limits import ReadBudget
from diagagent.telemetry.rawlogs import RAY_WORKER
from diagagent.telemetry.readers import LineBlock, LineChunks, compiled_lines, open_binary

BLOCK_BYTES = 1 << 22  # a file's first read (a terminal's wrapping is read off its lines)
NEXT_BLOCK_BYTES = 1 << 20  # ... and the next: a block whose passes (newlines, shapes, hashing) stay in a core's cache
# (L2 here: 1 MiB) is read 1.2-1.5x faster than one of 4 MiB (the fast path, best of 4 runs; smaller blocks gain no
# more and pay more per block)
COMPILED_BLOCK_BYTES = 1 << 21  # ... or this, when the compiled passes (diagagent._lines) read it: then the Python
# work paid once a block (its classes, its progress columns) weighs most, and 2 MiB read 1.08x faster than 1 MiB (best of
# 6 runs; 4 MiB gained less), where the numpy passes read 2 MiB 1.2x slower
MAX_LINE_BYTES = 1 << 20
CITE_CHARS = 2000  # a cited line's text is kept up to this many characters
PARALLEL_BYTES = 256 << 20  # bundles with more log bytes than this are read in chunks, by several processes: a pool's
# start (1-1.5 s) pays from 35 MB of small simulated files (11 MB/s per core) to ~250 MB of progress lines (80 MB/s per
# core) on 2 cores (benches/pool_threshold.py); a faster scan moves it up
CHUNK_BYTES = 128 << 20  # ... of about this many bytes of consecutive files each (whatever reads them); each chunk
# learns its line shapes afresh (~0.2 ms each, dozens per file's head), so larger chunks save that
NEAR_LINES = 32  # a line that prints no time takes the time of a line at most this far before it
# kind bits that need a look in the hot loop (a line whose words only say warning needs none: it is only kept at its
# last line, below)
K_ACTIVE = ~(K_HEADER | K_INDENTED | K_WARNING_WORDS)
WORDS_SAY_WARNING = K_ERROR_WORDS | K_WARNING_WORDS  # an INFO line whose words say warning or error
WORD_STAGES_PER_FILE = 512
TAIL_LINES = 64  # a block's last lines, read for the file's last line and each rank's
MAX_RANKS_PER_FILE = 1024
THREAD_DUMPS_PER_FILE = 256
FRAME_CODE_PER_FILE = 4096
LOOK_BACK_LINES = 8  # the line a failure followed is looked for this far back (blank lines, a traceback's header)
# an exception's message printed on the lines after it is cited with it, up to this many lines (a state dict's missing
# keys can run to thousands: the first are the record an SRE reads)
MESSAGE_LINES = 8
MESSAGE_ENDS_PER_FILE = 4096
FILES_PER_HOST = 8  # a warning or error is kept at its first line in up to this many files of a host
WARNING = 2
# a line's rank from its launcher's prefix (logparse._LAUNCHER_PREFIX, _RAY_PREFIX): torchrun's [rank3]: (global) and
# [default3]: (local); srun --label's "3: "; mpirun's [1,3]<stdout>: and horovodrun's [3]<stderr>: (global); a Ray
# actor's or SkyPilot node's "(Worker[rank=3] pid=..." and "(head, rank=0, pid=..." and Determined's "[rank=3] " (global);
# MPICH's, Intel MPI's and MS-MPI's "[13] " (global)
_RANK_PREFIX = re.compile(rb"^\s*\[(rank|default)(\d+)\]:|^\s*(\d{1,6}): |^\s*\[(?:\d+,)?(\d+)\]<std|"
                          rb"^(?:\[[\d;]*m)?\([^()]*?[\[ ]rank=(\d+)[\],]|^\s*\[rank=(\d+)\] |^\[(\d{1,5})\] ")
_PREFIX_IP = re.compile(rb"^(?:\x1b\[[\d;]*m)?\([^()]*?\bip=([\d.]+|[0-9a-fA-F:]+)\)")
_NCCL_HOST = re.compile(rb"^\s*(?:\[\w+\]:)?([\w.-]+):\d+:\d+ \[\d+\] NCCL")
# a launcher's prefix that names a host: pdsh's (DeepSpeed's launcher) "worker-3: ...", or Ray's worker prefix
# (rawlogs.RAY_WORKER) by its ip=: a job host or address, as job.yaml names them
_PDSH_HOST = re.compile(rb"([A-Za-z0-9][\w.-]*): ")
AGGREGATE_SNIFF_BYTES = 1 << 16  # a host folder's file whose first this many bytes name two job hosts holds many
# what a person who pasted a log wrote in it where output was cut or ended, never the job's own last words: "..."
# (dev:levanter-584), "[NO FURTHER OUTPUT]" and "[... 8 similar sleep messages ...]" (dev:ms-swift-6962), "<snip>"
_PASTE_MARK = re.compile(rb"^\s*(?:(?:\.{3,}|\xe2\x80\xa6)\s*|[\[(<](?:\.\.\.|\xe2\x80\xa6|snip|no further output|truncated|"
                         rb"omitted)[^\])>]*[\])>])\s*$", re.IGNORECASE)
# nor is a rule drawn under a banner: Lightning's '----...' under 'All DDP processes registered. Starting ddp with 2
# processes' (dev:pytorch-lightning-9641, a hang whose last words are the banner's)
_RULE = re.compile(rb"^\s*(?:-{3,}|={3,}|\*{3,}|_{3,}|#{3,}|~{3,})\s*$")
Stage = str  # init | training | checkpoint | eval | shutdown


ROOT_CAUSE_BLOCK = 8  # torchrun's root-cause block: '[0]:', time, host, rank, exitcode, error_file, traceback


@dataclass(slots=True)
class Occurrence:
    """Where a message first occurred on one host."""

    file: str
    line: int
    rank: int | None
    text: str
    ts: float | None  # its own time, or else the time of a line shortly before it
    ts_exact: bool  # the line printed its own time
    stage: Stage
    iteration: int | None  # the file's last progress iteration when it occurred (None: none yet)
    ts_next: float | None = None  # without a time of its own: the time of the next line that prints one
    after_progress: bool = False  # after the file's last progress line (set when the file ends)
    frames: tuple[str, ...] = ()  # an exception line: the functions of the traceback it ends, outermost first
    raised_at: tuple[int, str] | None = None  # an exception line: the frame that raised it (line, text), user code
    # first (the innermost frame outside site-packages), else the innermost
    innermost: tuple[int, str] | None = None  # an exception line: its traceback's innermost frame (line, text), in
    # whatever package
    end_line: int | None = None  # a record a terminal cut over several lines, joined back: its last line
    before: tuple[int, str] | None = None  # the last line the file printed before it (before its traceback, for an
    # exception): what the job was doing when it failed
    forwarded: bool = False  # a copy in another node's file (a Ray driver's, a launcher's): the host's own file's
    # line is cited over it


@dataclass(slots=True)
class MetricEvent:
    kind: str  # nan_loss | inf_loss | nan_grad_norm | loss_jump | grad_norm_jump | nan_iterations | straggler_rank
    # | step_time_slowdown
    file: str
    line: int
    host: str | None
    iteration: int | None
    value: float | None
    previous: float | None
    text: str


@dataclass(slots=True)
class ThreadDump:
    """One thread of a stack dump printed into a log (faulthandler, py-spy): where that thread was."""

    line: int  # its header
    text: str
    main: bool  # the main thread (py-spy's "MainThread", faulthandler's "Current thread")
    frames: list[tuple[int, str, str]] = field(default_factory=list)  # (line, text, function), innermost first


@dataclass(slots=True)
class FileSummary:
    """What one log file showed about progress and stages."""

    file: str
    host: str | None
    rank: int | None
    lines: int = 0
    first_ts: float | None = None
    last_ts: float | None = None
    progress_lines: int = 0
    first_iteration: int | None = None
    first_iteration_line: int = 0
    first_iteration_ts: float | None = None
    last_iteration: int | None = None
    last_iteration_line: int = 0
    last_iteration_ts: float | None = None
    stage: Stage = "init"
    transitions: list[tuple[int, float | None, Stage]] = field(default_factory=list)
    metrics: list[MetricEvent] = field(default_factory=list)
    resume_step: int | None = None  # the step of a checkpoint it loaded
    slow_from: int | None = None  # the first iteration of a lasting slowdown
    slow_ratio: float | None = None
    median_step_s: float | None = None
    slowest_step: tuple[float, int, str] | None = None  # the longest step a progress line shows: seconds, line, text
    # the first step SLOWER_THAN_FASTEST times the fastest before it: seconds, the fastest's, line, text, iteration (a
    # slow job's onset where too few steps were pasted for the windowed check)
    first_slow_step: tuple[float, float, int, str, int | None] | None = None
    last_iteration_text: str = ""  # the last progress line: the last activity before a hang or a kill
    last_progress_line: int = 0
    last_line: int = 0  # the file's last line that is not blank, and its text
    last_text: str = ""
    # in a file that interleaves ranks by prefix ([rank3]:, srun -l's '3: '): each rank's last line seen near the end
    # of a block (the rank that fell silent first is where a hang's ranks part, dev:torchtitan-1618)
    last_by_rank: dict[int, tuple[int, str]] = field(default_factory=dict)
    # lines whose words name a stage (stage_of_words), at the first line of each shape: the words around a cause
    # when its template folded them away ("INFO bootstrap.cu:169 -> 2" under "INFO <*>:<*> -> <*>")
    word_stages: list[tuple[int, Stage, str]] = field(default_factory=list)  # (line, stage, text)
    word_shapes: list[bytes] = field(default_factory=list)  # each word stage's line shape (a digest), for the merge
    thread_dumps: list[ThreadDump] = field(default_factory=list)  # stack dumps' threads, in order
    # a traceback the file ends in before its exception (a cut paste, a process killed while printing): its innermost
    # frame (line, text) and its functions, outermost first
    cut_traceback: tuple[int, str, tuple[str, ...]] | None = None
    # a traceback frame's line -> its source line printed under it: the two lines an SRE cites as the frame
    frame_code: dict[int, int] = field(default_factory=dict)
    # an exception's (or error line's) line -> the last line of its message, printed on the lines after it with no
    # header of their own ('RuntimeError: Missing key in checkpoint state_dict:' then the key, dev:megatron-lm-6270)
    message_end: dict[int, int] = field(default_factory=dict)
    launcher_failure: LauncherFailure | None = None  # torchrun's root-cause block: the failed rank, host, exit


@dataclass(slots=True)
class HostScan:
    counts: Counter[int] = field(default_factory=Counter)  # message id -> lines
    first: dict[int, Occurrence] = field(default_factory=dict)
    in_files: dict[int, list[Occurrence]] = field(default_factory=dict)  # warnings and errors: first in each file
    last: dict[int, Occurrence] = field(default_factory=dict)  # warnings and errors printed again: their last line
    files: int = 0
    lines: int = 0


@dataclass(slots=True)
class ScanPart:
    """What one process read: its messages (masked text, level, kind) and what it counted, by host and file."""

    messages: list[str]
    levels: list[int]
    kinds: list[int]
    code_lines: set[int]  # message ids seen as the source line under a traceback frame
    exception_lines: set[int]  # message ids seen ending a traceback
    continuation_lines: set[int]  # message ids seen continuing an exception's message (no header of their own)
    detail_of: dict[int, set[int]]  # indented continuation message id -> the exception message ids it details
    hosts: dict[str, HostScan]
    files: list[FileSummary]
    lines_read: int = 0
    lines_skipped: int = 0
    lines_not_utf8: int = 0
    # message ids ending a traceback under a frame whose source line is a `raise`: that exception's message, though
    # the paste lost its class (dev:swanlab-1014, accelerate's multi-line `raise ValueError(` then its message alone)
    raised_lines: set[int] = field(default_factory=set)
    issues: list[str] = field(default_factory=list)
    read_issues: list[ReadIssue] = field(default_factory=list)  # the same, as the bundle records them
    layouts: dict[bytes, ProgressLayout | None] = field(default_factory=dict)  # progress line shape -> layout
    unread: list[str] = field(default_factory=list)  # files left unread: the analyzer's time budget ran out


# --- progress: iterations, loss, step time --------------------------------------------------------------------


@dataclass(slots=True)
class _Progress:
    """Streaming checks over one file's progress lines: NaN/inf, 5x jumps, and the first lasting slowdown."""

    losses: list[float] = field(default_factory=list)
    grads: list[float] = field(default_factory=list)
    steps: list[float] = field(default_factory=list)  # recent step times
    step_its: list[int] = field(default_factory=list)  # their iterations
    baseline: list[float] = field(default_factory=list)  # step times before a candidate slowdown
    candidate: tuple[int, float, int, bytes] | None = None  # a step slower than the ones before: iteration, step
    # time, line, text
    confirm: int = 0
    last_ts: float | None = None
    last_it: int | None = None
    last_raw: bytes = b""  # the last progress line (its time is read when the file ends)
    nan_seen: int = 0
    all_steps: list[float] = field(default_factory=list)  # a sample of step times, for the file's median
    fastest: float | None = None  # the fastest step yet


_JUMP = 5.0
_WINDOW = 10
_CONFIRM = 3
SLOWER_THAN_FASTEST = 1.5


def _jump(history: list[float], value: float) -> float | None:
    """The recent median when `value` is more than 5x it, else None."""
    if len(history) < 3 or value <= _JUMP * min(history):
        return None
    med = sorted(history)[len(history) // 2]
    return med if med > 0 and value > _JUMP * med else None


def _mean_sd(values: list[float]) -> tuple[float, float]:
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def _text(raw: bytes) -> str:
    return raw[: CITE_CHARS * 2].decode("utf-8", errors="replace")[:CITE_CHARS].rstrip("\r")


STRAGGLER_RATIO = 1.2  # a straggler report whose slowest rank takes this much longer than the fastest names it


def _straggler_report(summary: FileSummary, report: StragglerReport | None, raw: bytes, line: int) -> None:
    """The first straggler-detector report of a file whose slowest rank is well behind the fastest: a metric event
    (the slowest rank's round-trip time against the fastest's)."""
    if report is None or report.min_ms <= 0 or report.max_ms < STRAGGLER_RATIO * report.min_ms:
        return
    if len(summary.metrics) < 64 and not any(m.kind == "straggler_rank" for m in summary.metrics):
        summary.metrics.append(MetricEvent(kind="straggler_rank", file=summary.file, line=line, host=summary.host,
                                           iteration=summary.last_iteration, value=report.max_ms,
                                           previous=report.min_ms, text=_text(raw)))


def _progress_line(summary: FileSummary, state: _Progress, prog: Progress, raw: bytes, line: int,
                   year: int | None) -> None:
    it = prog.iteration  # None on lines that print no step (HF Trainer's metric dicts)
    step = prog.step_time_s
    ts = parse_timestamp(_text(raw), year) if step is None else None
    if it is not None:
        if summary.first_iteration is None:
            summary.first_iteration, summary.first_iteration_line = it, line
            summary.first_iteration_ts = ts if ts is not None else parse_timestamp(_text(raw), year)
        summary.last_iteration = it
        summary.last_iteration_line = line
    state.last_raw, summary.last_progress_line = raw, line  # (a loss printed by batch or epoch is progress too)
    summary.progress_lines += 1

    def metric(kind: str, value: float | None, previous: float | None) -> None:
        if len(summary.metrics) < 64:
            summary.metrics.append(MetricEvent(kind=kind, file=summary.file, line=line, host=summary.host,
                                               iteration=it if it is not None else summary.last_iteration,
                                               value=value, previous=previous, text=_text(raw)))

    for name, value, history in (("loss", prog.loss, state.losses), ("grad_norm", prog.grad_norm, state.grads)):
        if value is None:
            continue
        if is_bad_number(value):
            metric(("nan_" if math.isnan(value) else "inf_") + name, value, history[-1] if history else None)
            continue
        med = _jump(history, value)
        if med is not None:
            metric(name + "_jump", value, med)
        history.append(value)
        del history[:-_WINDOW]
    if prog.nan_iterations and prog.nan_iterations > state.nan_seen:
        metric("nan_iterations", float(prog.nan_iterations), float(state.nan_seen))
        state.nan_seen = prog.nan_iterations
    if step is None and ts is not None and state.last_ts is not None and state.last_it is not None \
            and it is not None and it > state.last_it:
        step = (ts - state.last_ts) / (it - state.last_it)
    state.last_ts, state.last_it = ts, it
    if step is not None and (summary.slowest_step is None or step > summary.slowest_step[0]):
        summary.slowest_step = (step, line, _text(raw))
    if step is not None and summary.first_slow_step is None:
        if state.fastest is not None and step >= SLOWER_THAN_FASTEST * state.fastest:
            summary.first_slow_step = (step, state.fastest, line, _text(raw), it)
        state.fastest = step if state.fastest is None else min(state.fastest, step)
    if step is not None and it is not None:
        _slowdown(summary, state, it, step, raw, line)


def _slowdown(summary: FileSummary, state: _Progress, it: int, step: float, raw: bytes, line: int) -> None:
    """L4's temporal check on step time: a step past mean + 3 sigma (and 1.3x) of the last 10 that lasts."""
    if summary.slow_from is not None:
        return
    if state.candidate is not None:
        base = sum(state.baseline) / len(state.baseline)
        if step > 1.3 * base:
            state.confirm += 1
            if state.confirm >= _CONFIRM:
                _slow_from(summary, state, step)
            return
        state.candidate, state.confirm = None, 0
    recent = state.steps
    if len(recent) >= 5 and step > 1.3 * sum(recent) / len(recent):
        mean, sd = _mean_sd(recent)
        if step > mean + 3 * sd:
            state.candidate, state.confirm, state.baseline = (it, step, line, raw), 0, list(recent)
            return
    onset = _drift_onset(recent, state.step_its, it, step)
    if onset is not None:
        state.candidate, state.confirm, state.baseline = (onset, step, line, raw), 0, recent[:_WINDOW // 2]
        return
    recent.append(step)
    state.step_its.append(it)
    del recent[:-_WINDOW], state.step_its[:-_WINDOW]
    if len(state.all_steps) < 4096:
        state.all_steps.append(step)


def _drift_onset(recent: list[float], its: list[int], it: int, step: float) -> int | None:
    """A slowdown that crept in over a few steps, as a progress bar's smoothed rate shows one (tqdm's moving average;
    Lightning's rich bar, whose 1.02it/s fell to 0.69it/s over eight lines in a straggler): past 1.3x (and 3 sigma) of
    the older half of the window, though never past the steps just before it. The iteration where the climb began."""
    if len(recent) < _WINDOW:
        return None
    older = recent[:_WINDOW // 2]
    mean, sd = _mean_sd(older)
    if step <= 1.3 * mean or step <= mean + 3 * sd:
        return None
    start, later = len(recent), step
    while start > 0 and later >= recent[start - 1] > 1.02 * mean:  # back over the climb
        start -= 1
        later = recent[start]
    return its[start] if start < len(recent) else it


def _slow_from(summary: FileSummary, state: _Progress, step: float) -> None:
    """The candidate slowdown lasted (`step`: the step that confirmed it): the file is slow from its iteration on, and
    its line is a metric event."""
    it, first_step, line, raw = state.candidate  # type: ignore[misc]
    base = sum(state.baseline) / len(state.baseline)
    summary.slow_from, summary.slow_ratio = it, step / base if base > 0 else None
    if len(summary.metrics) < 64:
        summary.metrics.append(MetricEvent(kind="step_time_slowdown", file=summary.file, line=line, host=summary.host,
                                           iteration=it, value=first_step, previous=base, text=_text(raw)))


_STAGE_OF_MARKER = {"ckpt_start": "checkpoint", "eval_start": "eval", "shutdown": "shutdown",
                    "train_start": "training", "iteration": "training"}  # ckpt_end / eval_end: back to before


# --- one file ------------------------------------------------------------------------------------------------


def _ts_of(texts: list[bytes], year: int | None) -> float | None:
    for raw in texts:
        ts = parse_timestamp(raw[:160].decode("utf-8", errors="replace"), year)
        if ts is not None:
            return ts
    return None


_LIBRARY_PATH = re.compile(r"site-packages|dist-packages|/lib/python\d|<frozen |/usr/lib/")


def raising_frame(frames: list[tuple[int, str]]) -> tuple[int, str] | None:
    """The frame an SRE cites beside the exception: the innermost one in the job's own code (not an installed
    package), else the innermost. Python's traceback prints `File "<path>", line N, in <function>`, outermost first."""
    for frame in reversed(frames):
        if not _LIBRARY_PATH.search(frame[1]):
            return frame
    return frames[-1] if frames else None


_LOOKUP_FRAME = re.compile(r"\bin __get(?:attr|attribute|item)__\s*$")
# Python's TypeErrors for a call whose arguments do not bind to the callee's parameters (raised at the call, before the
# callee runs), and a frame whose source line only passes its own caller's arguments on (a decorator's
# `return fn(*args, **kwargs)`): that call's arguments were its caller's (dev:unsloth-2010, SFTTrainer's
# 'dataset_num_proc' through transformers' deprecation wrapper; Lightning's insert_env_defaults under a job's
# `Trainer(gpus=...)`, blind case genie-1)
_ARGUMENTS_DO_NOT_BIND = re.compile(
    r"\bTypeError: .*(?:got an unexpected keyword argument|missing \d+ required (?:positional|keyword-only) argument|"
    r"takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:were|was) given|got multiple values for argument)")
# a traceback's source line that raises what the next line prints: code, which the exception does not restate
# ('raise FileNotFoundError(f"can't find {glob_pattern} files ...")' over 'FileNotFoundError: can't find
# *_optim_states.pt files in directory ...', a paste cut after its last File line, dev:xtuner-674)
RAISE_STATEMENT = re.compile(r"\s*raise \w")
# an exception line that names its class and no message ('Exception: ' under torch.multiprocessing's
# `raise Exception(msg)`, whose message follows on lines of its own, dev:fairseq-2279): not what is raised
_BARE_CLASS = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*:?\s*$")
_FORWARDS_ARGUMENTS = re.compile(r"^\s*(?:return\s+)?[\w.]+\((?:self,\s*)?(?:\*args,\s*)?\*\*kwargs\)\s*$")


def innermost_frame(frames: list[tuple[int, str]], forwarding: frozenset[int] = frozenset()) -> tuple[int, str] | None:
    """Where an exception was raised: the innermost frame, past attribute- and item-lookup machinery that raises for
    its caller (torch's Module.__getattr__ under Lightning's `self.model.teardown`, dev:pytorch-lightning-2333; by
    Python's data model a mapping's __getitem__ raises KeyError for the key its caller asked for: transformers'
    BatchEncoding under a training loop's `batch["attention_mask"]`), and past `forwarding` frames (their lines):
    wrappers that passed on the arguments that did not bind."""
    for frame in reversed(frames):
        if not _LOOKUP_FRAME.search(frame[1]) and frame[0] not in forwarding:
            return frame
    return frames[-1] if frames else None


_BULK, _SILENT, _PROGRESS, _CANDIDATE, _REPEAT = 0, 1, 2, 3, 4  # the fast path's line classes (_FileReader._fast_block)
_COUNTED = (_BULK, _PROGRESS, _REPEAT)  # the classes counted in bulk
_PROGRESS_FIELDS = ("iteration", "loss", "grad_norm", "step_time_s", "nan_iterations")  # ProgressLayout.spans' order
_ROOT_CAUSE = b"Root Cause (first observed failure)"
_RELEARN = 8  # per block: re-reading a block's classes costs a pass over its distinct shapes and remaining lines


def _columnar(layout: ProgressLayout | None | bool) -> bool:
    """A progress layout the fast path reads by column: it has the iteration and the step time (else the step time
    comes from the line's time, line by line)."""
    return isinstance(layout, ProgressLayout) and layout.spans[0][1] > 0 and layout.spans[3][1] > 0


class _FileReader:
    """Reads one log file into a host's counts, first occurrences and the file's summary."""

    def __init__(self, part: ScanPart, shaper: LineShaper, lf: LogFile, host_of_rank: dict[int, str],
                 local_ranks: dict[str, list[int]], year: int | None,
                 host_of_name: dict[str, str] | None = None) -> None:
        self.part, self.shaper, self.lf, self.year = part, shaper, lf, year
        self.host_of_rank, self.local_ranks = host_of_rank, local_ranks
        self.host_of_name = host_of_name or {}  # job hosts and their addresses -> host
        self.summary = FileSummary(file=lf.file, host=lf.host, rank=lf.rank)
        self.budget: ReadBudget | None = None
        self.progress = _Progress()
        self.last_timed: tuple[int, bytes] = (0, b"")  # the latest line that printed a time
        self.parsed: tuple[int, float | None] = (-1, None)  # the time read from it, once
        self.root_cause_until = 0  # torchrun's 'Root Cause (first observed failure):' block runs to this line
        self.tb = 0  # traceback state: 0 none, 1 header seen, 2 after a frame, 3 after a source line, 4 after the
        # exception line or an error line with a header (what follows without a header continues its message), 5 in
        # a stack dump's thread, 6 after an exception line with no traceback before it (what follows may be its message)
        self.stage_before = "init"  # the stage a checkpoint or eval returns to
        self.pending: list[Occurrence] = []  # occurrences without a time, waiting for the next line that has one
        self.seen: set[int] = set()  # message ids already seen in this file
        self.repeated: dict[int, tuple[int, bytes]] = {}  # a warning or error printed again: its last (line, text)
        self.exception_mid = -1  # the exception line (or error line) whose message the next lines may continue
        self.exception_at = 0  # and its line
        self.after_traceback = False  # that line ended a traceback (not an error line with a header)
        self.frames: list[str] = []  # the functions of the traceback being read
        self.frame_lines: list[tuple[int, str]] = []  # its `File "...", line N` lines (line number, text)
        self.exception_frames: tuple[str, ...] = ()  # those of the last traceback, once its exception line came
        self.raised_at: tuple[int, str] | None = None  # the frame that raised the last traceback's exception
        self.innermost: tuple[int, str] | None = None  # and that traceback's innermost frame
        self.forwarding: frozenset[int] = frozenset()  # its frames (lines) whose source passes on its caller's arguments
        self.code_raises = False  # the source line under the last frame is a `raise` statement
        self.header_at: tuple[int, str] | None = None  # the last traceback header (line, text)
        self.before_header: tuple[int, str] | None = None  # and the line printed before it
        self.block_line: Callable[[int], bytes | None] = lambda n: None  # the block being read: its line n, if held
        self.bare_frame = False  # the last frame line was at the margin: a paste that lost its indentation
        self.wrapping: Wrapping | None = None  # how a terminal cut this file's lines, read off its first block
        self.spans: dict[int, int] = {}  # the first line of a record joined back from cut lines: its last line
        self.fast = False  # read blocks at once where that gives the same result (see _fast_block)
        self.relearn = _RELEARN  # how many more times a block's classes may be read again for shapes learned since
        self.columns: dict[bytes, ShapeColumns] = {}  # a progress line shape -> how to read its fields by column
        self.native: ModuleType | None = None  # compiled_lines(): the fast path's per-byte passes in C (same results)
        self.buffer: bytearray | None = None  # where the file's blocks are read (the same for a process's files)

    def rank_of(self, raw: bytes) -> int | None:
        if self.lf.rank is not None:
            return self.lf.rank
        m = _RANK_PREFIX.match(raw)
        if m is None:
            return None
        if m.group(1) == b"rank":
            return int(m.group(2))
        if m.group(3) is not None:  # srun --label's task id, unless torchrun's own global rank follows it (a task
            # that is one node's torchrun: "2: [rank13]: RuntimeError ...")
            inner = _RANK_PREFIX.match(raw[m.end():])
            return int(inner.group(2)) if inner is not None and inner.group(1) == b"rank" else int(m.group(3))
        if m.group(1) is None:  # mpirun's, horovodrun's or Ray's global rank
            return int(m.group(4) or m.group(5) or m.group(6) or m.group(7))
        local = int(m.group(2))
        ranks = self.local_ranks.get(self.lf.host or "", [])
        return ranks[local] if local < len(ranks) else None

    def host_of(self, raw: bytes) -> str | None:
        """The host of a line in a file that has none (a job-wide log) or holds many (a launcher's): from its rank
        prefix, NCCL header, or a prefix naming a job host or its address. A prefix's own address decides over a rank
        it also names: SkyPilot's '(worker1, rank=1, pid=3980, ip=10.128.0.41)' counts nodes, not ranks (its
        documented SKYPILOT_NODE_RANK; blind incident skypilot-colossalai-keyerror-new-commit-2node)."""
        m = _PREFIX_IP.match(raw)
        host = self.host_of_name.get(m.group(1).decode(errors="replace")) if m else None
        if host is not None:
            return host
        rank = self.rank_of(raw)
        if rank is not None:
            return self.host_of_rank.get(rank)
        m = _NCCL_HOST.match(raw)
        if m:
            return m.group(1).decode(errors="replace")
        m = _PDSH_HOST.match(raw) or RAY_WORKER.match(raw)
        return self.host_of_name.get(m.group(1).decode(errors="replace")) if m else None

    def _holds_many_hosts(self, root: Path) -> bool:
        """Whether a host folder's file (not one rank's) is a launcher's output holding several hosts' lines
        (DeepSpeed's pdsh, mpirun --tag-output, a Ray driver): its first lines name two job hosts or more by their
        prefixes."""
        try:
            with open_binary(root / self.lf.file) as f:
                head = f.read(AGGREGATE_SNIFF_BYTES)
        except (OSError, EOFError, zlib.error):
            return False
        named = {h for raw in head.split(b"\n")[:-1] if (h := self.host_of(raw)) is not None}
        return len(named) >= 2 and bool(named - {self.lf.host})

    def time_near(self, lineno: int) -> tuple[float | None, bool]:
        """The time of the latest line that printed one (read once), and whether that is this very line; None when
        it is more than NEAR_LINES before."""
        line, raw = self.last_timed
        if not raw or lineno - line > NEAR_LINES:
            return None, False
        if self.parsed[0] != line:
            self.parsed = (line, _ts_of([raw], self.year))
        return self.parsed[1], line == lineno

    def read(self, root: Path) -> None:
        part, summary = self.part, self.summary
        fixed_host = self.lf.host
        if fixed_host is not None and self.lf.rank is None and self.host_of_name and self._holds_many_hosts(root):
            fixed_host = None  # each line's host from its prefix; a line without one is the folder's host's
        host_scan = part.hosts.setdefault(fixed_host, HostScan()) if fixed_host is not None else None
        if host_scan is not None:
            host_scan.files += 1
        tables = (SHAPE_TABLE, HEX_SHAPE_TABLE)
        fast = self.fast and host_scan is not None
        # budgets, cut lines, a cut .gz read to its break; blank runs count once
        chunks = LineChunks(root / self.lf.file, self.lf.file, part.read_issues, self.budget, MAX_LINE_BYTES,
                            BLOCK_BYTES, blocks=fast, native=self.native,
                            next_block=min(COMPILED_BLOCK_BYTES if self.native else NEXT_BLOCK_BYTES, BLOCK_BYTES),
                            buffer=self.buffer)
        before = len(part.read_issues)
        carried: tuple[int, list[bytes]] = (1, [])  # lines that fill a terminal's width at a chunk's end
        for first, lines in chunks:
            if isinstance(lines, LineBlock):
                block = lines
                if summary.first_ts is None and first <= NEAR_LINES:
                    summary.first_ts = _ts_of(block.lines(0, NEAR_LINES - first + 1), self.year)
                if first == 1:
                    self.wrapping = block_wrapping(block)
                if self.wrapping is None and not carried[1]:
                    self._fast_block(block, first - 1, host_scan)  # type: ignore[arg-type]
                    continue
                lines = block.lines()
            if summary.first_ts is None and first <= NEAR_LINES:
                summary.first_ts = _ts_of(lines[:NEAR_LINES - first + 1], self.year)
            if first == 1:
                self.wrapping = wrapping_of(lines)
            if self.wrapping is not None:  # a record cut at the end of a chunk may go on in the next one
                if carried[1] and carried[0] + len(carried[1]) == first:
                    first, lines = carried[0], carried[1] + lines
                elif carried[1]:
                    self._block(carried[1], carried[0] - 1, tables, host_scan)
                cut = carry_from(lines, self.wrapping)
                carried, lines = (first + cut, lines[cut:]), lines[:cut]
            self._block(lines, first - 1, tables, host_scan)
        if carried[1]:
            self._block(carried[1], carried[0] - 1, tables, host_scan)
        lineno = chunks.lines
        part.issues.extend(str(i) for i in part.read_issues[before:])
        summary.lines = lineno
        part.lines_read += lineno
        if host_scan is not None:
            host_scan.lines += lineno
        self._finish(lineno)

    def _block(self, lines: list[bytes], lineno: int, tables: tuple[bytes, bytes], host_scan: HostScan | None) -> int:
        """Read a block of whole lines, records a terminal cut joined back first; the number of its last line."""
        if self.wrapping is not None:
            for first, last in unwrap(lines, self.wrapping).items():
                self.spans[lineno + first + 1] = lineno + last + 1
        self.block_line = lambda n: lines[n - lineno - 1] if lineno < n <= lineno + len(lines) else None
        end = self._lines(lines, lineno, self.shaper.shapes, self.shaper.kinds, tables, host_scan)
        self._last_line(lines, end)
        return end

    # --- the fast path: a block at once --------------------------------------------------------------------------
    #
    # Every line's shape comes from one vectorized pass (BlockShapes). A line whose shape is known, whose message is
    # below warning, says no warning, is no marker, traceback or dump line, and was seen before in this file ("bulk")
    # changes nothing in the per-line reader but its message's count and, if it prints a time, the latest timed line:
    # those are taken in bulk. A warning or error seen before in this file that is no marker, traceback or dump line
    # either (no K_ACTIVE bit: "repeat") changes that and the line its message was last printed at: taken in bulk too,
    # the last one per message. A progress line of a known layout is read by column, and the progress checks run over
    # the columns; where one could fire (a jump, a slowdown, NaN), the lines go through the per-line reader. Every other
    # line ("candidate"), and the lines after one while a traceback or a root-cause block is open, go through the
    # per-line reader (_lines) in order, so the result is the same as reading every line with it.

    def _fast_block(self, block: LineBlock, lineno: int, host_scan: HostScan) -> int:
        shapes = BlockShapes(block, self.native)
        self.relearn = _RELEARN
        self.block_line = lambda n: line(block, n - lineno - 1) if lineno < n <= lineno + len(block) else None
        index = 0
        while index < len(block):
            index = self._fast_from(block, shapes, index, lineno, host_scan)
        end = lineno + len(block)
        self._last_line(block.lines(max(0, len(block) - TAIL_LINES)), end)
        return end

    def _classes(self, shapes: BlockShapes, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
        """Lines index.. of the block: each one's class (_BULK, _SILENT, _PROGRESS, _REPEAT, _CANDIDATE), message id, and
        whether it prints a time; and the levels the classes were read at (-1: a shape not yet known)."""
        shaper, layouts = self.shaper, self.part.layouts
        kinds, levels = shaper.kinds, shaper.levels
        n = len(shapes.values)
        d_class, d_mid, d_timed = np.full(n, _CANDIDATE, np.int8), np.full(n, -1, np.int64), np.zeros(n, bool)
        for j, key in enumerate(shapes.values):
            code = shaper.shapes.get(key)
            if code is None:
                continue
            mid = code >> 1
            kind = kinds[mid]
            d_mid[j], d_timed[j] = mid, bool(code & 1)
            if mid == BLANK:
                d_class[j] = _SILENT
            elif levels[mid] >= WARNING or kind & WORDS_SAY_WARNING:
                if not kind & K_ACTIVE:  # (its words say warning, not error: K_ERROR_WORDS is active)
                    d_class[j] = _REPEAT
            elif not kind & K_ACTIVE:
                d_class[j] = _BULK
            elif kind & K_ACTIVE == K_ITERATION and _columnar(layouts.get(key)) and _ROOT_CAUSE not in key:
                d_class[j] = _PROGRESS
        rows = shapes.index[index:]
        cls, mids, timed = d_class[rows], d_mid[rows], d_timed[rows]
        hexed = shapes.hex_rows[shapes.hex_rows >= index] - index
        cls[hexed] = _CANDIDATE
        seen = self.seen
        unseen = [j for j, (c, mid) in enumerate(zip(d_class.tolist(), d_mid.tolist(), strict=True))
                  if c in _COUNTED and mid not in seen]
        if unseen:  # a message's first line in this file (of those counted in bulk) goes to the per-line reader
            firsts = shapes.first_rows() if index == 0 else None
            hexed_shapes = set(shapes.index[shapes.hex_rows].tolist())
            first_of: dict[int, int] = {}  # message id -> its first line counted in bulk
            for j in unseen:
                if firsts is not None and j not in hexed_shapes:  # (every line of shape j is counted in bulk)
                    row = int(firsts[j])
                else:
                    at = np.flatnonzero((rows == j) & (cls != _CANDIDATE))
                    if not len(at):
                        continue
                    row = int(at[0])
                mid = int(d_mid[j])
                first_of[mid] = min(row, first_of.get(mid, row))
            cls[list(first_of.values())] = _CANDIDATE
        return cls, mids, timed, [levels[m] if m >= 0 else -1 for m in d_mid.tolist()]

    def _fast_from(self, block: LineBlock, shapes: BlockShapes, index: int, lineno: int, host_scan: HostScan) -> int:
        """Read lines index.. of the block; the index to read on from when what the classes were read from changed
        (a new shape raised a message's level, the shape cache was cleared), else the block's length."""
        shaper = self.shaper
        cls, mids, timed, levels_then = self._classes(shapes, index)
        handled = np.zeros(len(cls), bool)  # lines the per-line reader took (and counted)
        pos = self._open_structure(block, index, 0, lineno, handled, host_scan)
        stop = len(cls)
        learned: set[int] = set()  # shapes unknown when the classes were read, that the per-line reader added since
        relearn = self.relearn > 0 and levels_then.count(-1) > 0
        for cand in [*np.flatnonzero(cls == _CANDIDATE).tolist(), len(cls)]:
            if cand < pos:
                continue
            if cand > pos:
                self._gap(block, shapes, index, pos, cand, cls, mids, timed, lineno, handled, host_scan)
            if cand == len(cls):
                break
            j = int(shapes.index[index + cand]) if relearn else -1
            if j in learned:  # a shape learned since repeats: read the classes again from here (a file's first lines
                self.relearn -= 1  # teach a fresh shaper its shapes; the lines after them need not go one by one)
                stop = cand
                break
            misses, cached = shaper.shape_misses, len(shaper.shapes)
            self._per_line(block, index + cand, lineno, host_scan)
            handled[cand] = True
            if j >= 0 and levels_then[j] == -1 and shapes.values[j] in shaper.shapes:
                learned.add(j)
            pos = self._open_structure(block, index, cand + 1, lineno, handled, host_scan)
            if shaper.shape_misses != misses and (len(shaper.shapes) <= cached  # (the cache was cleared)
                                                  or self._levels_moved(shapes, levels_then)):
                stop = pos
                break
        bulk = (cls[:stop] != _SILENT) & (cls[:stop] != _CANDIDATE) & ~handled[:stop]  # (the _COUNTED classes)
        if bulk.any():
            counted = np.bincount(mids[:stop][bulk])
            ids = np.flatnonzero(counted)
            host_scan.counts.update(dict(zip(ids.tolist(), counted[ids].tolist(), strict=True)))
        return index + stop

    def _levels_moved(self, shapes: BlockShapes, levels_then: list[int]) -> bool:
        """A message of this block's shapes changed level since its classes were read (a new shape raised it)."""
        levels = self.shaper.levels
        for key, was in zip(shapes.values, levels_then, strict=True):
            code = self.shaper.shapes.get(key)
            if code is not None and was >= 0 and levels[code >> 1] != was:
                return True
        return False

    def _open_structure(self, block: LineBlock, index: int, pos: int, lineno: int, handled: np.ndarray,
                        host_scan: HostScan) -> int:
        """Lines from `pos` through the per-line reader while a traceback (or dump) or a root-cause block is open."""
        while pos < len(handled) and (self.tb or lineno + index + pos + 1 <= self.root_cause_until):
            self._per_line(block, index + pos, lineno, host_scan)
            handled[pos] = True
            pos += 1
        return pos

    def _per_line(self, block: LineBlock, row: int, lineno: int, host_scan: HostScan) -> None:
        raw = line(block, row)
        self._lines([raw], lineno + row, self.shaper.shapes, self.shaper.kinds, (SHAPE_TABLE, HEX_SHAPE_TABLE),
                    host_scan)

    def _gap(self, block: LineBlock, shapes: BlockShapes, index: int, a: int, b: int, cls: np.ndarray,
             mids: np.ndarray, timed: np.ndarray, lineno: int, handled: np.ndarray, host_scan: HostScan) -> None:
        """Lines a..b (of those from `index`): bulk, repeat and progress lines only."""
        progress = np.flatnonzero(cls[a:b] == _PROGRESS) + a
        if len(progress) and not self._progress_columns(block, shapes, index + progress, lineno):
            for pos in range(a, b):  # a check could fire: the per-line reader, in order
                self._per_line(block, index + pos, lineno, host_scan)
            handled[a:b] = True
            return
        times = np.flatnonzero(timed[a:b] & (cls[a:b] != _SILENT)) + a
        for pos in times.tolist() if self.pending else ():  # (a list of the times only while one is pending)
            if not self.pending:
                break
            self._resolve_pending(line(block, index + pos))
        if len(times):
            row = index + int(times[-1])
            self.last_timed = (lineno + row + 1, line(block, row))
        repeats = np.flatnonzero(cls[a:b] == _REPEAT) + a
        if len(repeats):
            last = dict(zip(mids[repeats].tolist(), repeats.tolist(), strict=True))  # message -> its last line here
            for mid, pos in last.items():
                self.repeated[mid] = (lineno + index + pos + 1, line(block, index + pos))

    def _progress_columns(self, block: LineBlock, shapes: BlockShapes, rows: np.ndarray, lineno: int) -> bool:
        """Progress lines (block rows) read by column, when no check can fire on them and the stage stays; False
        (and nothing changed) otherwise."""
        summary, state = self.summary, self.progress
        if summary.stage not in ("training", "shutdown") or summary.first_iteration is None \
                or (state.candidate is not None and summary.slow_from is None) \
                or lineno + int(rows[0]) + 1 <= self.root_cause_until:
            return False
        cols = {name: np.full(len(rows), np.nan) for name in _PROGRESS_FIELDS}
        present = {name: np.zeros(len(rows), bool) for name in _PROGRESS_FIELDS}
        which = shapes.index[rows]
        one = bool((which == which[0]).all())  # (mostly one layout: np.unique's sort costs more than this check)
        for j in [int(which[0])] if one else np.unique(which).tolist():
            key = shapes.values[j]
            fields = [(name, scale) for name, (_, end, scale) in zip(_PROGRESS_FIELDS, self.part.layouts[key].spans,
                                                                      strict=True) if end]
            sel = np.arange(len(rows)) if one else np.flatnonzero(which == j)
            reader = self.columns.get(key)
            if reader is None:
                spans = [(start, end) for start, end, _ in self.part.layouts[key].spans if end]
                reader = self.columns[key] = ShapeColumns(line(block, int(rows[sel[0]])), spans)
            for (name, scale), values in zip(fields, reader.read(block, rows[sel], self.native), strict=True):
                with np.errstate(divide="ignore"):  # (a rate of 0 is an infinite step: read in full below)
                    cols[name][sel] = values * scale if scale >= 0 else -scale / values
                present[name][sel] = True
        if not all(np.isfinite(cols[name][present[name]]).all() for name in _PROGRESS_FIELDS):
            return False
        loss, grad = cols["loss"][present["loss"]], cols["grad_norm"][present["grad_norm"]]
        steps = cols["step_time_s"]
        slowing = summary.slow_from is None
        timed, fastest = steps[present["step_time_s"]], state.fastest
        if summary.first_slow_step is None and len(timed):  # (a first slow step is found line by line)
            fastest = float(timed.min()) if fastest is None else min(fastest, float(timed.min()))
            if float(timed.max()) >= SLOWER_THAN_FASTEST * fastest * (1 - 1e-6):
                return False
        if not (no_jump(state.losses, loss, _JUMP) and no_jump(state.grads, grad, _JUMP)) \
                or (present["nan_iterations"].any() and (cols["nan_iterations"][present["nan_iterations"]]
                                                         .astype(np.int64) > state.nan_seen).any()) \
                or (slowing and not no_slowdown(state.steps, steps, 1.3, 5)):
            return False
        for history, values in ((state.losses, loss), (state.grads, grad)):
            history.extend(values[-_WINDOW:].tolist())  # (only the last _WINDOW are kept)
            del history[:-_WINDOW]
        if slowing:
            state.steps.extend(steps[-_WINDOW:].tolist())
            state.step_its.extend(cols["iteration"][-_WINDOW:].astype(np.int64).tolist())
            del state.steps[:-_WINDOW], state.step_its[:-_WINDOW]
            state.all_steps.extend(steps[:max(0, 4096 - len(state.all_steps))].tolist())
        state.fastest = fastest
        j = int(np.argmax(steps))
        if summary.slowest_step is None or float(steps[j]) > summary.slowest_step[0]:
            summary.slowest_step = (float(steps[j]), lineno + int(rows[j]) + 1, _text(line(block, int(rows[j]))))
        last = int(rows[-1])
        it = int(cols["iteration"][-1])
        summary.progress_lines += len(rows)
        summary.last_iteration, summary.last_iteration_line = it, lineno + last + 1
        state.last_raw, summary.last_progress_line = line(block, last), lineno + last + 1
        state.last_ts, state.last_it = None, it
        return True

    def _lines(self, lines: list[bytes], lineno: int, shapes: dict[bytes, int], kinds: list[int],
               tables: tuple[bytes, bytes], host_scan: HostScan | None) -> int:
        shaper = self.shaper
        counts = host_scan.counts if host_scan is not None else None
        seen = self.seen
        levels, repeated = shaper.levels, self.repeated
        ids: list[int] = []
        append = ids.append
        pending = self.pending
        table, hex_table = tables
        for raw in lines:
            lineno += 1
            code = shapes.get(raw.translate(hex_table if b"0x" in raw else table))  # shape_of, inlined
            if code is None:
                code = shaper.add_shape(raw)
                self._word_stage(raw, lineno)
            mid = code >> 1
            kind = kinds[mid]
            if code & 1:
                self.last_timed = (lineno, raw)
                if pending:
                    self._resolve_pending(raw)
            if lineno <= self.root_cause_until and self.summary.launcher_failure is not None:
                read_launcher_field(self.summary.launcher_failure, split_header(_text(raw)).message)
            if kind & K_ACTIVE or self.tb:
                if kind & K_SKIP:
                    if mid == CORRUPT:
                        self.part.lines_skipped += 1
                    elif self.tb in (4, 6):
                        self.tb = 0
                    continue
                self._structure(mid, kind, raw, lineno)
            if counts is None:
                self._hostless(mid, raw, lineno)
                continue
            append(mid)
            if mid not in seen:
                seen.add(mid)
                self._first_in_file(mid, raw, lineno, host_scan)  # type: ignore[arg-type]
            elif lineno <= self.root_cause_until:
                self._root_cause_line(mid, raw, lineno, host_scan)  # type: ignore[arg-type]
            elif levels[mid] >= WARNING or kind & WORDS_SAY_WARNING:
                repeated[mid] = (lineno, raw)
        if counts is not None and ids:
            counts.update(ids)
        return lineno

    def _thread_dump(self, raw: bytes, lineno: int) -> None:
        dumps = self.summary.thread_dumps
        self.tb = 5
        if len(dumps) < THREAD_DUMPS_PER_FILE:
            text = _text(raw)
            dumps.append(ThreadDump(lineno, text, main="Current thread" in text or '"MainThread"' in text))

    def _dump_frame(self, raw: bytes, lineno: int) -> None:
        dumps = self.summary.thread_dumps
        if dumps and dumps[-1].line < lineno and len(dumps[-1].frames) < 64 and len(dumps) <= THREAD_DUMPS_PER_FILE:
            text = _text(raw)
            function = frame_function(split_header(text).message)
            if function is not None:
                dumps[-1].frames.append((lineno, text, function))

    def _word_stage(self, raw: bytes, lineno: int) -> None:
        stages = self.summary.word_stages
        if len(stages) < WORD_STAGES_PER_FILE:
            text = _text(raw)
            stage = stage_of_words(text)
            if stage is not None:
                stages.append((lineno, stage, text))  # type: ignore[arg-type]
                self.summary.word_shapes.append(_shape_digest(raw))

    def _first_in_file(self, mid: int, raw: bytes, lineno: int, scan: HostScan) -> None:
        """A message's first line in this file: the host's first occurrence if it is new there; for a warning or
        error, also its first line in this file (for up to FILES_PER_HOST files of the host)."""
        known = scan.first.get(mid)
        new_on_host = known is None or known.forwarded
        if not new_on_host and self.shaper.levels[mid] < WARNING:
            return
        occ = self._occurrence(raw, lineno, mid)
        if new_on_host:
            scan.first[mid] = occ
        if self.shaper.levels[mid] >= WARNING:
            here = scan.in_files.setdefault(mid, [])
            if len(here) < FILES_PER_HOST:
                here.append(occ)

    def _hostless(self, mid: int, raw: bytes, lineno: int) -> None:
        host = self.host_of(raw) or self.lf.host or "(unknown host)"
        scan = self.part.hosts.setdefault(host, HostScan())
        scan.counts[mid] += 1
        scan.lines += 1
        if mid not in scan.first:
            occ = scan.first[mid] = self._occurrence(raw, lineno, mid)
            # another node's line in this node's file: the worker's output a Ray driver repeats under its
            # '(RayTrainWorker pid=30300, ip=10.20.1.13)' prefix, where the worker's own file holds it too (incident
            # raytrain-nccl-socket-fallback-4node)
            occ.forwarded = self.lf.host is not None and host != self.lf.host

    def _occurrence(self, raw: bytes, lineno: int, mid: int = -1) -> Occurrence:
        text = _text(raw)
        if "\ufffd" in text:
            self.part.lines_not_utf8 += 1
        ts, exact = self.time_near(lineno)
        occ = Occurrence(file=self.lf.file, line=lineno, rank=self.rank_of(raw), text=text, ts=ts, ts_exact=exact,
                         stage=self.summary.stage, iteration=self.summary.last_iteration,
                         frames=self.exception_frames if mid == self.exception_mid and self.after_traceback else (),
                         raised_at=self.raised_at if mid == self.exception_mid and self.after_traceback else None,
                         innermost=self.innermost if mid == self.exception_mid and self.after_traceback else None,
                         end_line=self.spans.get(lineno),
                         before=self.before_header if mid == self.exception_mid and self.after_traceback
                         else self._line_before(lineno))
        if not exact and len(self.pending) < 10_000:
            self.pending.append(occ)
        return occ

    def _line_before(self, lineno: int) -> tuple[int, str] | None:
        """The last line printed before line `lineno` within a few lines of it and in the block being read: not blank,
        not a traceback's frame, source line or header (the last thing the job said before it failed)."""
        for n in range(lineno - 1, max(0, lineno - LOOK_BACK_LINES) - 1, -1):
            raw = self.block_line(n)
            if raw is None:
                return None
            text = _text(raw)
            parsed = split_header(text)
            if parsed.message.strip() and not parsed.indented and line_kind(parsed.message) not in ("frame", "traceback"):
                return n, text
        return None

    def _resolve_pending(self, raw: bytes) -> None:
        """A line with a header after occurrences that print no time: its time bounds theirs from above."""
        ts = _ts_of([raw], self.year)
        if ts is not None:
            for occ in self.pending:
                occ.ts_next = ts
            self.pending.clear()

    def _root_cause_line(self, mid: int, raw: bytes, lineno: int, scan: HostScan) -> None:
        """A line of torchrun's root-cause block (its exit code, signal, host) that the block of the other failures
        printed first: the root cause's is the one to cite (dev:chatglm-efficient-tuning-75)."""
        first = scan.first.get(mid)
        if first is not None and first.file == self.lf.file and first.line < lineno:
            scan.first[mid] = self._occurrence(raw, lineno, mid)

    def _structure(self, mid: int, kind: int, raw: bytes, lineno: int) -> None:
        """Markers (progress, stage) and the traceback state: which lines are frames, source, the exception."""
        if b"Root Cause (first observed failure)" in raw:  # torch.distributed.elastic's failure summary
            self.root_cause_until = lineno + ROOT_CAUSE_BLOCK
            self.summary.launcher_failure = LauncherFailure(line=lineno)
        elif b"noticed that process rank" in raw and self.summary.launcher_failure is None:  # mpirun's
            self.summary.launcher_failure = mpirun_failure(_text(raw), lineno)
        marker = kind & K_MARKER_MASK
        if marker:
            self._marker(MARKERS[marker], raw, lineno)
        if kind & K_DUMP:
            self._thread_dump(raw, lineno)
            return
        if self.tb == 5:
            if kind & K_FRAME:
                self._dump_frame(raw, lineno)
                return
            self.tb = 0
        if self.tb == 6:  # the lines after an exception pasted without its traceback: its message, until a line of
            # its own (dev:trl-835's 'RuntimeError: Expected to mark a variable ready only once. ...' then 'Parameter
            # at index 386 has been marked as ready twice. ...')
            if not kind & (K_HEADER | K_EXCEPTION | K_FRAME | K_TRACEBACK) and lineno - self.exception_at <= MESSAGE_LINES:
                self._message_line(lineno)
                return
            self.tb = 0
        if kind & K_TRACEBACK:
            self.tb = 1
            self.frames, self.frame_lines, self.forwarding = [], [], frozenset()
            self.header_at = (lineno, _text(raw))
            self.before_header = self._line_before(lineno)
        elif kind & K_FRAME:
            self.tb, self.code_raises = 2, False
            text = _text(raw)
            parsed = split_header(text)
            self.bare_frame = not parsed.indented
            function = frame_function(parsed.message)
            if function is not None and len(self.frames) < 64:
                self.frames.append(function)
                self.frame_lines.append((lineno, text))
        elif kind & K_CARET:
            return
        elif self.tb == 2 and self.bare_frame and not kind & (K_EXCEPTION | K_HEADER):
            # a paste that lost its indentation (Markdown strips it, dev:reasoning-gym-417): the line after a frame
            # at the margin is that frame's source line, not yet the exception
            self.part.code_lines.add(mid)
            self._frame_code(lineno, raw)
            self.tb = 3
        elif self.tb == 4 and self.after_traceback and kind & K_EXCEPTION and not kind & K_HEADER:
            self.part.exception_lines.add(mid)  # a second exception printed right after a traceback's
            self.exception_mid, self.exception_at = mid, lineno
        elif self.tb == 4 and not kind & K_HEADER:
            self.part.continuation_lines.add(mid)
            self._message_line(lineno)
            if kind & K_INDENTED and self.exception_mid >= 0:
                self.part.detail_of.setdefault(mid, set()).add(self.exception_mid)
        elif self.tb in (2, 3) and not kind & K_EXCEPTION and kind & K_INDENTED:  # (a frame's next source line:
            # Python 3.13's multi-line statements, rich.traceback's lines around the current one)
            # Python prints a frame's source line indented; a line at the margin after a frame is the exception,
            # whatever its class is called (pyarrow.lib.ArrowInvalid after a Cython frame with no source line,
            # dev:llamafactory-412)
            self.part.code_lines.add(mid)
            if self.tb == 2:
                self._frame_code(lineno, raw)
            self.tb = 3
        elif self.tb in (1, 2, 3) and (not kind & K_HEADER or kind & K_EXCEPTION):
            self.part.exception_lines.add(mid)
            text = _text(raw)
            if self.code_raises and not _BARE_CLASS.match(split_header(text).message):
                self.part.raised_lines.add(mid)
            self.tb, self.exception_mid, self.exception_at, self.after_traceback = 4, mid, lineno, True
            self.exception_frames, self.frames = tuple(self.frames), []
            self.innermost = innermost_frame(
                self.frame_lines, self.forwarding if _ARGUMENTS_DO_NOT_BIND.search(text) else frozenset())
            self.raised_at, self.frame_lines, self.forwarding = raising_frame(self.frame_lines), [], frozenset()
        elif kind & K_ERROR_HEAD:  # what follows an error line without a header of its own continues its message
            self.tb, self.exception_mid, self.exception_at, self.after_traceback = 4, mid, lineno, False
        elif kind & K_EXCEPTION and not kind & K_INDENTED and self.tb == 0:
            self.tb, self.exception_at = 6, lineno
        else:
            self.tb = 0

    def _message_line(self, lineno: int) -> None:
        """A line of the open exception's message: cited with it, up to MESSAGE_LINES after it."""
        if lineno - self.exception_at <= MESSAGE_LINES and len(self.summary.message_end) < MESSAGE_ENDS_PER_FILE:
            self.summary.message_end[self.exception_at] = lineno

    def _frame_code(self, lineno: int, raw: bytes) -> None:
        """The line right after a frame is its source line."""
        if self.frame_lines and len(self.summary.frame_code) < FRAME_CODE_PER_FILE:
            self.summary.frame_code[self.frame_lines[-1][0]] = lineno
        code = split_header(_text(raw)).message
        if self.frame_lines and _FORWARDS_ARGUMENTS.match(code):
            self.forwarding |= {self.frame_lines[-1][0]}
        self.code_raises = bool(RAISE_STATEMENT.match(code))

    def _marker(self, marker: str, raw: bytes, lineno: int) -> None:
        summary = self.summary
        if marker == "iteration":
            _progress_line(summary, self.progress, self._read_progress(raw), raw, lineno, self.year)
        elif marker == "straggler_report":  # a report of the slowest rank; no change of stage
            _straggler_report(summary, read_straggler_report(split_header(_text(raw)).message), raw, lineno)
            return
        elif marker == "ckpt_load":  # loading a checkpoint: training resumes after its step; no change of stage
            step = resume_step(split_header(_text(raw)).message)
            if step is not None:
                summary.resume_step = max(step, summary.resume_step or 0)
            return
        if marker in ("ckpt_start", "eval_start") and summary.stage not in ("checkpoint", "eval"):
            self.stage_before = summary.stage
        elif marker in ("ckpt_end", "eval_end") and summary.stage not in ("checkpoint", "eval"):
            # an end with no start before it (Megatron-LM prints only ' [2026-11-21 06:09:43] saved checkpoint from
            # iteration    6600 to ...' and 'validation loss at iteration 6600', incident slurm-cgroup-oomkill-
            # megatron-4node): the job goes on with what it was doing (not back to init)
            self.stage_before = summary.stage
        new = _STAGE_OF_MARKER.get(marker, self.stage_before)
        if new != summary.stage and summary.stage != "shutdown":
            summary.stage = new
            if len(summary.transitions) >= 64:
                del summary.transitions[1:33]
            summary.transitions.append((lineno, self.time_near(lineno)[0], new))

    def _read_progress(self, raw: bytes) -> Progress:
        """A progress line's numbers; a layout per line shape makes the next line of that shape cheap."""
        layouts = self.part.layouts
        key = raw.translate(SHAPE_TABLE)
        layout = layouts.get(key, False)
        if layout is False:
            if len(layouts) > 10_000:
                layouts.clear()
            layout = layouts[key] = progress_layout(raw)
        if layout is None:
            return read_progress(raw[:CITE_CHARS].decode("utf-8", errors="replace"))
        return read_progress_with(layout, raw)

    def _last_line(self, lines: list[bytes], lineno: int) -> None:
        """Keep the block's last line that is not blank (`lineno` is the number of the block's last line), and each
        rank's last line among the block's last TAIL_LINES, where a prefix names ranks."""
        summary, tail = self.summary, lines[-TAIL_LINES:]
        for back in range(len(tail) - 1, -1, -1):
            if not tail[back].strip() or _PASTE_MARK.match(tail[back]) or _RULE.match(tail[back]):
                continue
            at = lineno - (len(tail) - 1 - back)
            if summary.last_line < at:
                summary.last_line, summary.last_text = at, _text(tail[back])
            if self.lf.rank is not None:
                return
            rank = self.rank_of(tail[back])  # (by its prefix: the file has no rank of its own)
            if rank is not None and summary.last_by_rank.get(rank, (0, ""))[0] < at \
                    and len(summary.last_by_rank) < MAX_RANKS_PER_FILE:
                summary.last_by_rank[rank] = (at, _text(tail[back]))

    def _finish(self, lineno: int) -> None:
        summary = self.summary
        if self.tb in (2, 3) and self.frame_lines:
            line, text = self.frame_lines[-1]
            summary.cut_traceback = (line, text, tuple(self.frames))
        elif self.tb == 1 and self.header_at is not None:  # the file ends at a traceback's header: the exception is
            # lost with its frames, and the header is all there is to cite (dev:semanticstylegan-8)
            summary.cut_traceback = (*self.header_at, ())
        host_scan = self.part.hosts.get(self.lf.host) if self.lf.host is not None else None
        if host_scan is not None:  # where a repeated warning ended up: the loss scale at its floor, the last retry
            for mid, (line, raw) in self.repeated.items():
                text = _text(raw)
                ts = _ts_of([raw], self.year)
                host_scan.last[mid] = Occurrence(file=self.lf.file, line=line, rank=self.rank_of(raw), text=text, ts=ts,
                                                 ts_exact=ts is not None, stage=summary.stage,
                                                 iteration=summary.last_iteration)
        state = self.progress
        if summary.slow_from is None and state.candidate is not None and state.confirm >= 1:
            # a slowdown that lasted to the file's end: every step after it was slow, however few the file still held
            # (a DALI pipeline's 0.17 s steps at 8.7 s from batch 100 on, dev:dali-2608)
            _slow_from(summary, state, state.candidate[1])
        summary.last_ts = _ts_of([self.last_timed[1]], self.year) if self.last_timed[1] else None
        steps = self.progress.all_steps
        summary.median_step_s = statistics.median(steps) if steps else None
        if self.progress.last_raw:
            summary.last_iteration_text = _text(self.progress.last_raw)
            summary.last_iteration_ts = parse_timestamp(summary.last_iteration_text, self.year)
        self.part.files.append(summary)


# --- a whole bundle, in one or more processes --------------------------------------------------------------------


@dataclass(slots=True)
class ScanJob:
    """What a worker process needs: plain data, no Bundle (it does not cross processes)."""

    root: str
    files: list[LogFile]
    host_of_rank: dict[int, str]
    local_ranks: dict[str, list[int]]
    names: list[str]
    year: int | None
    budget: ReadBudget | None = None  # this process's share of the bundle's read budget
    deadline: float | None = None  # epoch seconds: no file is started after it (the analyzer's budget)
    fast: bool | None = None  # read blocks at once where that gives the same result; None: Settings.fast_scan
    compiled: bool | None = None  # the fast path's per-byte passes in C where built; None: Settings.compiled_scan
    host_of_name: dict[str, str] = field(default_factory=dict)  # job hosts and their addresses -> host


def scan_files(job: ScanJob) -> ScanPart:
    """Read some of a bundle's log files (the work of one process). A file whose reading breaks keeps the lines
    read before the break (and is named in `issues`); past the deadline the files left are listed as unread."""
    shaper = LineShaper(names_pattern(job.names), year=job.year)
    part = ScanPart(messages=shaper.messages, levels=shaper.levels, kinds=shaper.kinds, code_lines=set(),
                    exception_lines=set(), continuation_lines=set(), detail_of={}, hosts={}, files=[])
    root = Path(job.root)
    budget = job.budget or ReadBudget()
    settings = Settings.load() if job.fast is None or job.compiled is None else None
    fast = job.fast if job.fast is not None else settings.fast_scan  # type: ignore[union-attr]
    compiled = job.compiled if job.compiled is not None else settings.compiled_scan  # type: ignore[union-attr]
    native = compiled_lines() if compiled else None
    buffer = bytearray(BLOCK_BYTES)  # every file's blocks are read into it in turn
    for i, lf in enumerate(job.files):
        if i and job.deadline is not None and time.time() > job.deadline:
            part.unread.extend(f.file for f in job.files[i:])
            break
        reader = _FileReader(part, shaper, lf, job.host_of_rank, job.local_ranks, job.year, job.host_of_name)
        reader.budget, reader.fast, reader.native, reader.buffer = budget, fast, native, buffer
        try:
            reader.read(root)
        except MemoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - hostile input must cost one file, not the whole log analysis
            part.issues.append(f"{lf.file}: read stopped at an error ({type(exc).__name__}: {str(exc)[:200]}); "
                               "the lines before it are kept")
    part.messages, part.levels, part.kinds = shaper.messages, shaper.levels, shaper.kinds
    return part


@dataclass(slots=True)
class Template:
    """One mined template, over the whole bundle."""

    id: str
    text: str
    level: int  # LEVEL_RANK, -1 when nothing says
    kinds: int  # OR of the kind flags of its messages
    code: bool  # a source line under a traceback frame
    exception: bool  # ends a traceback
    continuation: bool = False  # continues an exception's message
    details: set[str] = field(default_factory=set)  # an indented detail line of these exception templates
    count: int = 0


@dataclass(slots=True)
class LogScan:
    """The whole bundle's logs, counted by template: per host counts and first occurrences, and per file summaries."""

    templates: dict[str, Template]
    host_counts: dict[str, Counter[str]]
    first: dict[str, dict[str, Occurrence]]  # template id -> host -> earliest occurrence on that host
    in_files: dict[str, dict[str, list[Occurrence]]]  # warnings and errors: template id -> host -> first per file
    files: list[FileSummary]
    hosts_with_logs: list[str]
    lines_read: int
    lines_skipped: int
    lines_not_utf8: int
    issues: list[str]
    last: dict[str, dict[str, Occurrence]] = field(default_factory=dict)
    unread: list[str] = field(default_factory=list)  # files left unread: the time budget ran out  # warnings and errors printed again:
    # template id -> host -> the latest line (a loss scale's last value, the last retry)


def _cited_before(a: Occurrence, b: Occurrence) -> bool:
    """A host's first line of a message: in its own file before a copy in another node's, then the earlier."""
    return not a.forwarded if a.forwarded != b.forwarded else _earlier(a, b)


def _earlier(a: Occurrence, b: Occurrence) -> bool:
    if a.ts is not None and b.ts is not None and a.ts != b.ts:
        return a.ts < b.ts
    return (a.file, a.line) < (b.file, b.line)


def _shape_digest(raw: bytes) -> bytes:
    return hashlib.blake2b(shape_of(raw), digest_size=8).digest()


def _first_word_stages(files: list[FileSummary]) -> None:
    """Keep each file's word stages only at the first line of their shape in the whole bundle (files in name order),
    as one reader keeps them; a chunk's reader kept them at the first line of their shape in its chunk."""
    seen: set[bytes] = set()
    for f in files:
        kept = [(stage, shape) for stage, shape in zip(f.word_stages, f.word_shapes) if shape not in seen]
        seen.update(f.word_shapes)
        if len(kept) < len(f.word_stages):
            f.word_stages, f.word_shapes = [k[0] for k in kept], [k[1] for k in kept]


def _split(files: list[LogFile], root: Path, parts: int) -> list[list[LogFile]]:
    """The files in name order, cut into up to `parts` runs of consecutive files of about equal bytes (so a host's
    files stay together, and the runs read one after another see every message in the order one reader would)."""
    ordered = sorted(files, key=lambda f: f.file)
    if parts <= 1 or len(ordered) <= 1:  # (also: no files, no chunk)
        return [ordered] if ordered else []
    sizes = [(root / f.file).stat().st_size for f in ordered]
    target, most = sum(sizes) / parts, -(-len(ordered) // parts)  # a run ends at its share of the bytes or files
    runs: list[list[LogFile]] = [[]]
    done = 0
    for f, size in zip(ordered, sizes):
        runs[-1].append(f)
        done += size
        if (done >= target or len(runs[-1]) >= most) and len(runs) < parts:
            runs.append([])
            done = 0
    return [run for run in runs if run]


def log_bytes(bundle: Bundle) -> int:
    return sum((bundle.root / f.file).stat().st_size for f in bundle.log_files)


def default_workers(bundle: Bundle) -> int:
    """Processes for this bundle's logs: one per core past PARALLEL_BYTES, else one."""
    return Workers().count if log_bytes(bundle) > PARALLEL_BYTES else 1


def scan_bundle(bundle: Bundle, workers: int | None = None, miner: TemplateMiner | None = None,
                deadline: float | None = None, runner: Workers | None = None, fast: bool | None = None,
                compiled: bool | None = None) -> LogScan:
    """Read every log file once, in chunks of consecutive files (by `runner`: in this process, a process pool or
    Ray; default: `workers` local processes, or one per core for a bundle past PARALLEL_BYTES), then mine the
    distinct messages into templates in the order one reader would meet them and merge the counts by template: the
    same scan however the files were cut. No file is started after `deadline` (epoch seconds); `fast`: the block
    path or line by line (None: Settings.fast_scan); `compiled`: its per-byte passes in C, where the install built them
    (None: Settings.compiled_scan)."""
    job = bundle.job
    own = runner is None
    runner = runner or Workers(default_workers(bundle) if workers is None else max(1, workers))
    names = [n.host for n in job.nodes] + [n.ip for n in job.nodes if n.ip]
    local = {h: rs for h, rs in job.host_to_ranks.items()}
    parts_wanted = runner.chunks(log_bytes(bundle), len(bundle.log_files), PARALLEL_BYTES, CHUNK_BYTES)
    chunks = _split(bundle.log_files, bundle.root, parts_wanted)
    shares = bundle.new_budget().share(len(chunks))
    host_of_name = {**{h: h for h in job.hosts}, **job.ip_to_host}
    jobs = [ScanJob(str(bundle.root), chunk, dict(job.rank_to_host), local, names, bundle.year, share, deadline, fast,
                    compiled, host_of_name) for chunk, share in zip(chunks, shares)]
    try:
        parts = runner.map(scan_files, jobs)
    finally:
        if own:
            runner.close()
    bundle.issues.extend(i for p in parts for i in p.read_issues)
    return merge_parts(parts, miner or TemplateMiner(), [h for h in job.hosts])


ERROR = LEVEL_RANK["error"]
# the line a Python traceback ends with: the exception's (dotted) class name, a colon, its message
_RAISED = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*: \S")


def merge_parts(parts: list[ScanPart], miner: TemplateMiner, job_hosts: list[str]) -> LogScan:
    """Mine every part's messages (in a fixed order), then merge counts and first occurrences by final template."""
    clusters = [[miner.add(m) if mid > OVERFLOW else -1 for mid, m in enumerate(part.messages)] for part in parts]
    final = miner.final_templates({c for part_clusters in clusters for c in part_clusters if c >= 0})
    tid_of_cluster = {cid: template_id(text) for cid, text in final.items()}
    templates: dict[str, Template] = {}
    host_counts: dict[str, Counter[str]] = {}
    first: dict[str, dict[str, Occurrence]] = {}
    in_files: dict[str, dict[str, list[Occurrence]]] = {}
    last: dict[str, dict[str, Occurrence]] = {}
    for part, part_clusters in zip(parts, clusters):
        tid_of: list[str | None] = [tid_of_cluster.get(c) for c in part_clusters]
        for mid, tid in enumerate(tid_of):
            if tid is None:
                continue
            t = templates.get(tid)
            if t is None:
                t = templates[tid] = Template(id=tid, text=final[part_clusters[mid]], level=-1,
                                              kinds=0, code=False, exception=False)
            t.level = max(t.level, part.levels[mid])
            t.kinds |= part.kinds[mid]
            t.code = t.code or mid in part.code_lines
            t.exception = t.exception or mid in part.exception_lines
            if t.exception and t.level < ERROR and (_RAISED.match(t.text) or mid in part.raised_lines):
                t.level = ERROR  # a raised exception ends the traceback, whatever its name (ArrowInvalid: ...)
            t.continuation = t.continuation or mid in part.continuation_lines
            t.details.update(tid_of[e] for e in part.detail_of.get(mid, ()) if tid_of[e] is not None)
        for host, scan in part.hosts.items():
            counts = host_counts.setdefault(host, Counter())
            here_first = {}
            for mid, n in scan.counts.items():
                tid = tid_of[mid]
                if tid is None:
                    continue
                counts[tid] += n
                templates[tid].count += n
                occ = scan.first.get(mid)
                known = here_first.get(tid)
                if occ is not None and (known is None or _cited_before(occ, known)):
                    here_first[tid] = occ
            for tid, occ in here_first.items():
                known = first.setdefault(tid, {}).get(host)
                if known is None or _cited_before(occ, known):
                    first[tid][host] = occ
            for mid, occs in scan.in_files.items():
                tid = tid_of[mid]
                if tid is not None:
                    in_files.setdefault(tid, {}).setdefault(host, []).extend(occs)
            for mid, occ in scan.last.items():
                tid = tid_of[mid]
                known = last.setdefault(tid, {}).get(host) if tid is not None else None
                if tid is not None and (known is None or _earlier(known, occ)):
                    last[tid][host] = occ
    files = sorted((f for part in parts for f in part.files), key=lambda f: f.file)
    if len(parts) > 1:
        _first_word_stages(files)
    last_line = {f.file: f.last_iteration_line for f in files}
    for per_host in first.values():
        for occ in per_host.values():
            occ.after_progress = occ.line > last_line.get(occ.file, 0)
    hosts = [h for h in job_hosts if h in host_counts] + sorted(h for h in host_counts if h not in job_hosts)
    for per_host in in_files.values():
        for host, occs in per_host.items():
            by_file: dict[str, Occurrence] = {}
            for occ in sorted(occs, key=lambda o: (o.file, o.line)):
                by_file.setdefault(occ.file, occ)
            per_host[host] = list(by_file.values())[:FILES_PER_HOST]
    return LogScan(templates=templates, host_counts=host_counts, first=first, in_files=in_files, files=files,
                   hosts_with_logs=hosts, lines_read=sum(p.lines_read for p in parts),
                   lines_skipped=sum(p.lines_skipped for p in parts),
                   lines_not_utf8=sum(p.lines_not_utf8 for p in parts), issues=[i for p in parts for i in p.issues],
                   last=last, unread=sorted(f for p in parts for f in p.unread))
