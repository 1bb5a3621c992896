"""Stack aggregation for hangs and stragglers (ByteRobust): cluster per-rank py-spy stacks, name the outliers,
and pick the parallel group to over-evict, with Flight Recorder words for what the stacks show.

`analyze_stacks(bundle) -> StackFindings`; pure and LLM-free. A bundle without stacks gets findings saying so; a file
that cannot be used is skipped and named (in `bundle.issues`), and its rank counts as unknown, not as one without a dump.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Literal

from pydantic import BaseModel, Field

from diagagent.analysis.guard import Budget, odd_ranks
from diagagent.analysis.pyspy import EXPECTED, Frame, parse_dump
from diagagent.analysis.workers import Workers
from diagagent.telemetry import Bundle, FileError, Job, PartFile, ReadIssue, file_errors
from diagagent.telemetry.readers import read_text

GroupKind = Literal["tp", "cp", "pp", "dp", "node"]
FrState = Literal["matched", "callsite_mismatch", "type_mismatch", "not_joined"]
KIND_ORDER: tuple[GroupKind, ...] = ("tp", "cp", "pp", "dp", "node")

COLLECTIVES = frozenset({
    "all_reduce", "all_gather", "all_gather_into_tensor", "_all_gather_base", "all_gather_object",
    "all_gather_coalesced", "all_reduce_coalesced", "reduce_scatter", "reduce_scatter_tensor",
    "_reduce_scatter_base", "broadcast", "broadcast_object_list", "reduce", "all_to_all", "all_to_all_single",
    "barrier", "monitored_barrier", "gather", "scatter", "gather_object", "scatter_object_list",
})
P2P_OPS = frozenset({"send", "recv", "isend", "irecv", "batch_isend_irecv", "_batch_p2p_ops", "_batched_p2p_ops", "_p2p_ops"})
_DIST_FILE = re.compile(r"torch/distributed/|distributed_c10d|_functional_collectives|p2p_communication")
_SO_VERSION = re.compile(r"(?:-[\d.]+)?\.so(?:\.[\w.]+)?$")
_PY_PREFIX = re.compile(r"^.*?/(?:site|dist)-packages/|^.*?/lib/python\d+(?:\.\d+)?/")

# --- the findings ------------------------------------------------------------------------------------------


class StackFrameOut(BaseModel):
    function: str
    file: str
    line: int | None = None
    native: bool = False


class StackCluster(BaseModel):
    """Ranks whose main-thread stacks are the same (exact), or nearly so (merged)."""

    id: str
    signature: str = Field(description="Short hash of the normalized representative stack.")
    role: Literal["healthy", "outlier"]
    ranks: list[int]
    ranks_text: str = Field(description="The ranks as compact ranges, e.g. 0-135,144-255.")
    hosts: list[str]
    samples: int = Field(description="Dumps in this cluster (a rank counts once per dump round).")
    exact_signatures: int = Field(description="How many exact signatures were merged into this cluster.")
    top: str = Field(description="Innermost Python frame, where these ranks are.")
    top_at: tuple[str, int] | None = Field(None, description="That frame in one of the cluster's stack files: the "
                                                            "file and its line.")
    top_end: int | None = Field(None, description="The last line of that thread's frames in the same file, when "
                                                  "after top_at's: the stack cited as one record.")
    collective: str | None = Field(None, description="Flight Recorder profiling name, e.g. nccl:all_reduce.")
    call_site: str | None = None
    fr_state: FrState = "matched"
    stack: list[StackFrameOut] = Field(description="Representative main-thread stack, innermost first.")
    files: list[str] = Field(description="A few stack files in this cluster (relative to the bundle).")


class GroupCandidate(BaseModel):
    kind: GroupKind
    group_id: str  # the smallest rank of a parallel group, or the host name for kind "node"
    outliers: int  # outlier samples in this group, all rounds
    rounds_flagged: int
    machines: int


class Eviction(BaseModel):
    """ByteRobust's over-eviction: the parallel group shared by the outliers; every machine in it goes."""

    kind: GroupKind
    group_id: str
    ranks: list[int]
    hosts: list[str]
    machine_count: int
    outlier_ranks: list[int]
    unexplained_ranks: list[int] = Field(default_factory=list, description="Outliers outside the group.")
    rounds: int
    rounds_flagged: int
    reasoning: str
    candidates: list[GroupCandidate] = Field(default_factory=list)


class FrClusterState(BaseModel):
    cluster: str
    state: FrState
    collective: str | None
    ranks_text: str
    rank_count: int


class FrSummary(BaseModel):
    """What Flight Recorder's fr_trace would say, read from stacks: the collective and who has not joined it."""

    collective: str | None = Field(description="Where the healthy majority waits (nccl:all_reduce, ...).")
    call_site: str | None = None
    healthy_ranks: int
    behind_ranks: list[int] = Field(description="Ranks not in that collective with the majority.")
    behind_hosts: list[str]
    not_joined_ranks: list[int] = Field(description="Ranks in no collective at all: the likely culprits.")
    ranks_without_dump: list[int] = Field(default_factory=list)
    states: list[FrClusterState] = Field(default_factory=list)
    text: str


class StackSuspect(BaseModel):
    host: str
    score: float
    reason: str
    files: list[str] = Field(default_factory=list)


class StackFindings(BaseModel):
    present: bool
    note: str = ""
    files: int = 0
    dumps: int = 0
    ranks: int = 0
    rounds: int = 0
    skipped: int = Field(0, description="Lines or records that were not py-spy output, or were cut; skipped.")
    skipped_dumps: int = Field(0, description="Dumps with no usable thread; skipped.")
    unusable_files: int = Field(0, description="Files that could not be read or held no usable dump; skipped.")
    unknown_ranks: list[int] = Field(default_factory=list, description="Ranks whose file held no usable dump: "
                                                                       "their state is unknown (not counted as "
                                                                       "ranks without a dump).")
    subprocess_dumps: int = Field(0, description="Dumps of child processes (dataloader, checkpoint); not clustered.")
    problems: list[str] = Field(default_factory=list)
    clusters: list[StackCluster] = Field(default_factory=list)
    eviction: Eviction | None = None
    fr_summary: FrSummary | None = None
    suspects: list[StackSuspect] = Field(default_factory=list)


# --- normalization -----------------------------------------------------------------------------------------


def shorten_path(path: str, native: bool) -> str:
    """Library paths shortened: site-packages and interpreter prefixes cut, .so versions dropped."""
    if path.startswith("/proc/"):
        path = re.sub(r"^/proc/\d+/root", "", path)
    if native:
        base = path.rsplit("/", 1)[-1]
        return _SO_VERSION.sub(".so", base) if ".so" in base else base
    short = _PY_PREFIX.sub("", path)
    if short.startswith("/"):
        short = "/".join(short.split("/")[-3:])
    return short


def normalize_frame(frame: Frame, with_lines: bool = False) -> str:
    """One frame as a signature token: `function (file)`, addresses masked, lines only if asked."""
    function = "<addr>" if frame.function.startswith("0x") else frame.function
    file = shorten_path(frame.file, frame.native)
    if with_lines and frame.line:
        return f"{function} ({file}:{frame.line})"
    return f"{function} ({file})"


def _normalize_stack(frames: list[Frame], cache: dict[Frame, str],
                     with_lines: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(every frame, the Python frames only) as signature tokens. Native frames vary from rank to rank (which
    syscall a wait sits in); the Python ones tell where the rank is. Runs of unsymbolized frames collapse."""
    out: list[str] = []
    python: list[str] = []
    for f in frames:
        tok = cache.get(f)
        if tok is None:
            tok = normalize_frame(f, with_lines)
            cache[f] = tok
        if out and tok == out[-1] and tok.startswith("<addr>"):
            continue
        out.append(tok)
        if not f.native:
            python.append(tok)
    return tuple(out), tuple(python) or tuple(out)


def find_collective(python_tokens: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(`nccl:<op>`, the caller outside torch.distributed) for the innermost collective or p2p op in a stack."""
    for i, tok in enumerate(python_tokens):
        function, _, rest = tok.partition(" (")
        if function in COLLECTIVES or function in P2P_OPS:
            if not _DIST_FILE.search(rest) and function not in ("batch_isend_irecv", "_batch_p2p_ops", "_batched_p2p_ops", "_p2p_ops"):
                continue
            op = {"_batch_p2p_ops": "batch_isend_irecv", "_batched_p2p_ops": "batch_isend_irecv",
                  "_p2p_ops": "send/recv"}.get(function, function)
            call_site = next((t for t in python_tokens[i + 1:] if not _DIST_FILE.search(t.partition(" (")[2])
                              and "c10d_logger" not in t), None)
            return f"nccl:{op}", call_site
    return None, None


def _is_p2p(collective: str | None) -> bool:
    return collective is not None and collective.removeprefix("nccl:") in P2P_OPS | {"send/recv"}


# --- collecting samples ------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Sample:
    rank: int | None
    host: str | None
    file: str
    round: int
    sig: int  # index into the exact signatures
    line: int = 0  # the line of its innermost Python frame in the file (0: not known, as in py-spy's JSON)
    end_line: int = 0  # the last line of its frames in the file: the thread's stack as one record


@dataclass(slots=True)
class _Collected:
    samples: list[_Sample] = field(default_factory=list)
    signatures: list[tuple[str, ...]] = field(default_factory=list)
    python_sigs: list[tuple[str, ...]] = field(default_factory=list)
    frames: list[list[Frame]] = field(default_factory=list)
    files: int = 0
    dumps: int = 0
    skipped: int = 0
    skipped_dumps: int = 0
    subprocess_dumps: int = 0
    problems: list[str] = field(default_factory=list)
    unusable_files: int = 0
    unknown_ranks: set[int] = field(default_factory=set)  # ranks whose file held no usable dump
    line_cache: dict[str, Frame] = field(default_factory=dict)
    norm_cache: dict[Frame, str] = field(default_factory=dict)
    sig_index: dict[tuple[str, ...], int] = field(default_factory=dict)


PARALLEL_STACK_BYTES = 32 << 20  # stack dumps past this many bytes are parsed in chunks, by several processes (as
# the probes: a pool's start pays from some tens of MB)
CHUNK_STACK_BYTES = 4 << 20  # ... of about this many bytes of consecutive files each


@dataclass(slots=True)
class _StackJob:
    bundle: Bundle  # a view: its own issues
    files: list[PartFile]
    with_lines: bool
    deadline: float | None  # epoch seconds: no file is started after it (but the bundle's first)
    first: bool


def _collect_files(job: _StackJob) -> tuple[_Collected, int | None, list[ReadIssue]]:
    """One chunk of stack files as samples (signatures numbered within the chunk), the index of its first file left
    unread at the deadline (None: all read), and the read problems met, in order."""
    col = _Collected()
    for i, part in enumerate(job.files):
        if (i or not job.first) and job.deadline is not None and time.time() > job.deadline:
            return _portable(col), i, job.bundle.issues
        _collect_one(job.bundle, part, col, job.with_lines)
    return _portable(col), None, job.bundle.issues


def _portable(col: _Collected) -> _Collected:
    """The chunk without its parse caches (they are only for speed, and large)."""
    col.line_cache, col.norm_cache, col.sig_index = {}, {}, {}
    return col


def _collect(bundle: Bundle, with_lines: bool, budget: Budget | None = None,
             workers: Workers | None = None) -> _Collected:
    """Every stack file's dumps as samples. A file that cannot be read, or that holds text but no usable dump, is
    skipped and named in `bundle.issues`; reading stops early (and says so in `budget`) when the budget is spent.
    Many files are parsed by `workers` in chunks of consecutive files, merged in order."""
    files = bundle.stack_files
    size = sum(_size(bundle, p) for p in files) if workers is not None else 0
    parts = workers.chunks(size, len(files), PARALLEL_STACK_BYTES, CHUNK_STACK_BYTES) if workers is not None else 1
    if parts <= 1:
        col = _Collected()
        for i, part in enumerate(files):
            if i and budget is not None and budget.spent():
                budget.stop(part.file, len(files) - i)
                break
            _collect_one(bundle, part, col, with_lines)
        return col
    step = -(-len(files) // parts)
    chunks = [files[i:i + step] for i in range(0, len(files), step)]
    deadline = budget.deadline() if budget is not None else None
    jobs = [_StackJob(bundle.view(), chunk, with_lines, deadline, k == 0) for k, chunk in enumerate(chunks)]
    col = _Collected()
    for k, (part_col, unread, issues) in enumerate(workers.map(_collect_files, jobs)):  # type: ignore[union-attr]
        bundle.issues.extend(issues)
        _merge(col, part_col)
        if unread is not None:
            at = k * step + unread
            if budget is not None:
                budget.stop(files[at].file, len(files) - at)
            break
    return col


def _merge(into: _Collected, col: _Collected) -> None:
    """Add one chunk's samples after those before it, numbering its signatures as one reader would have."""
    index = []
    for sig, python_sig, frames in zip(col.signatures, col.python_sigs, col.frames):
        idx = into.sig_index.get(sig)
        if idx is None:
            idx = into.sig_index[sig] = len(into.signatures)
            into.signatures.append(sig)
            into.python_sigs.append(python_sig)
            into.frames.append(frames)
        index.append(idx)
    for sample in col.samples:
        sample.sig = index[sample.sig]
    into.samples.extend(col.samples)
    into.files += col.files
    into.dumps += col.dumps
    into.skipped += col.skipped
    into.skipped_dumps += col.skipped_dumps
    into.subprocess_dumps += col.subprocess_dumps
    into.unusable_files += col.unusable_files
    into.problems.extend(col.problems[: max(0, 10 - len(into.problems))])
    into.unknown_ranks |= col.unknown_ranks


def _size(bundle: Bundle, part: PartFile) -> int:
    try:
        return (bundle.root / part.file).stat().st_size
    except OSError:
        return 0


def _collect_one(bundle: Bundle, part: PartFile, col: _Collected, with_lines: bool) -> None:
    col.files += 1
    try:
        with file_errors(part.file, EXPECTED):
            text = _read_member(bundle, part.file)
            samples, first_problem = _collect_file(bundle, part, text, col, with_lines)
    except FileError as exc:
        _unusable(bundle, col, part, ReadIssue.of(exc))
        return
    if not samples and text.strip():
        why = first_problem or "no thread with frames"
        _unusable(bundle, col, part, ReadIssue(file=part.file, problem=f"no usable py-spy dump ({why}); "
                                                                       f"expected {EXPECTED}; file skipped"))
    col.samples.extend(samples)


def _unusable(bundle: Bundle, col: _Collected, part: PartFile, issue: ReadIssue) -> None:
    bundle.issues.append(issue)
    col.unusable_files += 1
    if len(col.problems) < 10:
        col.problems.append(str(issue))
    if part.rank is not None:
        col.unknown_ranks.add(part.rank)


def _collect_file(bundle: Bundle, part: PartFile, text: str, col: _Collected,
                  with_lines: bool) -> tuple[list[_Sample], str | None]:
    """One file's samples (kept by the caller only when the whole file was read) and its first odd part."""
    job = bundle.job
    parsed = parse_dump(text, col.line_cache, file=part.file)
    col.skipped += parsed.skipped
    col.problems.extend(f"{part.file}: {p}" for p in parsed.problems[: max(0, 10 - len(col.problems))])
    samples: list[_Sample] = []
    rounds_of: dict[int | None, int] = defaultdict(int)
    first_pid = next((d.pid for d in parsed.dumps if d.parent_pid is None), None)
    for dump in parsed.dumps:
        col.dumps += 1
        if dump.parent_pid is not None:
            col.subprocess_dumps += 1
            continue
        rank = part.rank if dump.pid == first_pid else None
        if rank is None and dump.local_rank is not None and part.host is not None:
            rank = job.local_rank_to_rank(part.host, dump.local_rank)
        if rank is None and part.rank is not None and dump.pid != first_pid:
            col.subprocess_dumps += 1  # another process in a rank's file: not the rank itself
            continue
        thread = dump.main_thread(printed_oldest_first=not parsed.json)
        if thread is None or not thread.frames:
            col.skipped_dumps += 1
            continue
        sig, python_sig = _normalize_stack(thread.frames, col.norm_cache, with_lines)
        idx = col.sig_index.get(sig)
        if idx is None:
            idx = col.sig_index[sig] = len(col.signatures)
            col.signatures.append(sig)
            col.python_sigs.append(python_sig)
            col.frames.append(thread.frames)
        host = part.host or (job.host_of(rank) if rank is not None else None)
        key = rank if rank is not None else dump.pid
        top = next((i for i, f in enumerate(thread.frames) if not f.native), 0)
        line = thread.frame_lines[top] if top < len(thread.frame_lines) else 0
        samples.append(_Sample(rank, host, part.file, rounds_of[key], idx, line, max(thread.frame_lines, default=0)))
        rounds_of[key] += 1
    if parsed.skipped and samples:
        bundle.issues.append(ReadIssue(file=part.file, line=parsed.first_line, count=parsed.skipped,
                                       problem=f"not {EXPECTED}, skipped"))
    return samples, parsed.problems[0] if parsed.problems else None


def _read_member(bundle: Bundle, rel: str) -> str:
    """A stack file's text. The listing never enters symlinked folders, so a file that is not itself a link stays
    inside the bundle and skips `Bundle.read_text`'s full path resolution (the cost that matters at 16k files)."""
    path = bundle.root / rel
    if not os.path.islink(path):
        return read_text(path, rel, bundle.issues)
    return bundle.read_text(rel)


# --- clustering --------------------------------------------------------------------------------------------


def cluster_signatures(python_sigs: list[tuple[str, ...]], sizes: list[int], similarity: float = 0.9,
                       max_reps: int = 64) -> list[int]:
    """Cluster id per exact signature: equal Python frames first, then similar stacks (same innermost frame,
    SequenceMatcher ratio >= `similarity`) merged into the larger one. Bounded: at most `max_reps` per bucket."""
    coarse: dict[tuple[str, ...], int] = {}
    coarse_of: list[int] = []
    coarse_size: list[int] = []
    coarse_sig: list[tuple[str, ...]] = []
    for sig, n in zip(python_sigs, sizes):
        c = coarse.get(sig)
        if c is None:
            c = coarse[sig] = len(coarse_sig)
            coarse_sig.append(sig)
            coarse_size.append(0)
        coarse_size[c] += n
        coarse_of.append(c)
    merged = list(range(len(coarse_sig)))
    reps: dict[str, list[int]] = defaultdict(list)
    for c in sorted(range(len(coarse_sig)), key=lambda i: -coarse_size[i]):
        sig = coarse_sig[c]
        bucket = reps[sig[0] if sig else ""]
        for r in bucket:
            other = coarse_sig[r]
            if abs(len(other) - len(sig)) <= max(2, len(sig) // 5) and \
                    SequenceMatcher(None, sig, other, autojunk=False).ratio() >= similarity:
                merged[c] = r
                break
        else:
            if len(bucket) < max_reps:
                bucket.append(c)
    return [merged[c] for c in coarse_of]


# --- rounds, healthy and outliers --------------------------------------------------------------------------


def _cohorts(job: Job, ranks: set[int]) -> dict[int, int]:
    """Rank -> peer cohort: ranks of one pipeline stage run the same code, so they are compared among
    themselves when every stage has at least 3 replicas; otherwise one cohort."""
    p = job.parallelism
    if p is None or p.pp <= 1 or p.dp * p.cp < 3:
        return {r: 0 for r in ranks}
    return {r: job.coords(r).pp for r in ranks}


def _healthy_per_round(samples: list[_Sample], cluster_of: list[int], cohort: dict[int, int]) -> set[int]:
    """Clusters that are dominant in some cohort of this round (ties: the cluster larger over the round)."""
    overall = Counter(cluster_of[s.sig] for s in samples)
    per: dict[int, Counter[int]] = defaultdict(Counter)
    for s in samples:
        per[cohort.get(s.rank, -1) if s.rank is not None else -1][cluster_of[s.sig]] += 1
    healthy: set[int] = set()
    for counts in per.values():
        healthy.add(max(counts, key=lambda c: (counts[c], overall[c], -c)))
    return healthy


@dataclass(slots=True)
class _GroupTally:
    outliers: int = 0  # outlier samples in the group, all rounds
    samples: int = 0  # rank samples of the group, all rounds
    flags: int = 0  # rounds in which this group stood out most
    z: float = 0.0  # its excess of outliers over the job's base rate, in standard deviations


def _z(t: _GroupTally, rate: float) -> float:
    expected = t.samples * rate
    spread = math.sqrt(expected * (1.0 - rate)) if 0.0 < rate < 1.0 else 1.0
    return (t.outliers - expected) / (spread or 1.0)


GroupKey = tuple[GroupKind, tuple[str, ...]]  # (kind, the machines of the group)


@dataclass(slots=True)
class _Groups:
    """Machine-level parallel groups. A rank-level PP group holds one rank per stage, but a machine hosts a whole
    TP group, so a rank's k-group is taken as the machines of its rank-level k-group: the 8 PP groups of one
    pipeline (tp=8) are one machine set. Cached, since every outlier asks."""

    job: Job
    kinds: list[GroupKind]
    hosts_of_group: dict[tuple[GroupKind, int], tuple[str, ...]] = field(default_factory=dict)
    first_rank: dict[GroupKey, int] = field(default_factory=dict)

    def keys(self, rank: int, host: str | None) -> list[GroupKey]:
        out: list[GroupKey] = []
        for kind in self.kinds:
            if kind == "node":
                if host is not None:
                    out.append(("node", (host,)))
                continue
            gid = self.job.group_id(kind, rank)
            hosts = self.hosts_of_group.get((kind, gid))
            if hosts is None:
                hosts = self.hosts_of_group[(kind, gid)] = tuple(sorted(self.job.hosts_of(self.job.group_of(kind, gid))))
            key = (kind, hosts)
            self.first_rank[key] = min(self.first_rank.get(key, gid), gid)
            out.append(key)
        return out

    def label(self, key: GroupKey) -> str:
        return key[1][0] if key[0] == "node" else str(self.first_rank.get(key, "?"))


def _pick(tallies: dict[GroupKey, _GroupTally], by: Literal["outliers", "z"]) -> GroupKey | None:
    """The group with the most outliers (or the largest excess over the base rate), then fewest machines, then
    tp < cp < pp < dp < node."""
    if not tallies:
        return None

    def order(k: GroupKey) -> tuple[float, ...]:
        t = tallies[k]
        head = (-round(t.z, 9), -t.outliers) if by == "z" else (-t.outliers,)
        return (*head, len(k[1]), KIND_ORDER.index(k[0]))

    return min(tallies, key=lambda k: (order(k), k[1]))


# --- the analysis ------------------------------------------------------------------------------------------


LINE_OUTLIERS_AT_MOST = 0.25  # ranks apart only by a line: a few against the rest, not two halves of the job


def analyze_stacks(bundle: Bundle, with_lines: bool = False, similarity: float = 0.9,
                   budget: Budget | None = None, workers: Workers | None = None) -> StackFindings:
    """Cluster every rank's main-thread stack; the dominant cluster per pipeline stage is healthy; the parallel
    group holding the most outliers (across dump rounds: the most often flagged) is the eviction set. Where every
    rank of a hung or failed job is in the same functions, their lines are compared too: a few ranks at another line
    wait at another call site (NCCL's collectives return at once; a rank blocks at the next sync the path it took
    reaches), which is what sets them apart."""
    found = _analyze_stacks(bundle, with_lines, similarity, budget, workers)
    if with_lines or not found.present or bundle.job.status not in ("hung", "failed") \
            or any(c.role == "outlier" for c in found.clusters):
        return found
    by_line = _analyze_stacks(bundle.view(), True, similarity, budget, workers)  # (its read issues are the first's)
    odd = {r for c in by_line.clusters if c.role == "outlier" for r in c.ranks}
    return by_line if odd and len(odd) <= LINE_OUTLIERS_AT_MOST * by_line.ranks else found


def _analyze_stacks(bundle: Bundle, with_lines: bool, similarity: float, budget: Budget | None,
                    workers: Workers | None) -> StackFindings:
    if not bundle.stack_files:
        return StackFindings(present=False, note="This bundle has no stacks/ (py-spy dumps); stack aggregation "
                                                 "needs `py-spy dump` of every rank taken while the job hung or slowed.")
    job = bundle.job
    col = _collect(bundle, with_lines, budget, workers)
    findings = StackFindings(present=True, files=col.files, dumps=col.dumps, skipped=col.skipped,
                             skipped_dumps=col.skipped_dumps, subprocess_dumps=col.subprocess_dumps,
                             problems=col.problems, unusable_files=col.unusable_files,
                             unknown_ranks=sorted(col.unknown_ranks))
    if not col.samples:
        findings.note = "No usable py-spy dump in stacks/: every file was empty, cut or not py-spy output."
        return findings
    sizes = Counter(s.sig for s in col.samples)
    cluster_of = cluster_signatures(col.python_sigs, [sizes[i] for i in range(len(col.signatures))], similarity)
    ranked = [s for s in col.samples if s.rank is not None]
    rounds: dict[int, list[_Sample]] = defaultdict(list)
    for s in ranked:
        rounds[s.round].append(s)
    cohort = _cohorts(job, {s.rank for s in ranked if s.rank is not None})
    findings.rounds = len(rounds)
    findings.ranks = len({s.rank for s in ranked})

    healthy_votes: Counter[int] = Counter()
    seen_rounds: Counter[int] = Counter()
    outlier_rounds: Counter[int] = Counter()  # rank -> rounds in which it was an outlier
    rank_rounds: Counter[int] = Counter()
    tallies: dict[GroupKey, _GroupTally] = defaultdict(_GroupTally)
    groups = _Groups(job, _group_kinds(job))
    outlier_sets: list[frozenset[int]] = []
    for r in sorted(rounds):
        samples = rounds[r]
        healthy = _healthy_per_round(samples, cluster_of, cohort)
        for c in {cluster_of[s.sig] for s in samples}:
            seen_rounds[c] += 1
            healthy_votes[c] += c in healthy
        round_tally: dict[GroupKey, _GroupTally] = defaultdict(_GroupTally)
        per_host = Counter(s.host for s in samples)
        odd: set[int] = set()
        for s in samples:
            rank_rounds[s.rank] += 1  # type: ignore[index]
            if cluster_of[s.sig] in healthy:
                continue
            odd.add(s.rank)  # type: ignore[arg-type]
            outlier_rounds[s.rank] += 1  # type: ignore[index]
            for key in groups.keys(s.rank, s.host):  # type: ignore[arg-type]
                round_tally[key].outliers += 1
        round_rate = len(odd) / len(samples)
        for key, t in round_tally.items():
            t.samples = sum(per_host[h] for h in key[1])
            t.z = _z(t, round_rate)
            tallies[key].outliers += t.outliers
            tallies[key].samples += t.samples
        flagged = _pick(round_tally, "z")
        if flagged is not None:
            tallies[flagged].flags += 1
        outlier_sets.append(frozenset(odd))

    total = sum(rank_rounds.values())
    rate = sum(outlier_rounds.values()) / total if total else 0.0
    for t in tallies.values():
        t.z = _z(t, rate)
    # one picture (a hang, however many dumps): the group that covers the outliers, as ByteRobust does; samples
    # that differ from round to round (fail-slow): the group whose outliers exceed the base rate the most
    varying = len(set(outlier_sets)) > 1
    healthy_clusters = {c for c in seen_rounds if healthy_votes[c] * 2 > seen_rounds[c]}
    if varying:
        n_rounds = len(rounds)
        bar = max(0.5, rate + 2.0 * math.sqrt(rate * (1.0 - rate) / n_rounds))
        behind = sorted(rk for rk, n in outlier_rounds.items() if n / rank_rounds[rk] >= bar)
    else:
        behind = sorted(outlier_rounds)
    odd, issue = odd_ranks(job)
    if issue is not None:
        bundle.issues.append(issue)
    expected = (set(job.rank_to_host) or set(range(job.world_size))) - col.unknown_ranks - odd
    have = {s.rank for s in ranked}
    without_dump = sorted(expected - have) if len(have) * 2 >= len(expected) else []

    clusters = _clusters_out(col, cluster_of, healthy_clusters)
    findings.clusters = clusters
    findings.eviction = _eviction(groups, tallies, behind, without_dump, len(rounds), varying)
    findings.fr_summary = _fr_summary(job, clusters, behind, without_dump)
    findings.suspects = _suspects(job, col, cluster_of, healthy_clusters, outlier_rounds, rank_rounds,
                                  findings.eviction, clusters, without_dump)
    findings.note = _note(findings)
    return findings


def _group_kinds(job: Job) -> list[GroupKind]:
    p = job.parallelism
    kinds: list[GroupKind] = []
    if p is not None:
        kinds = [k for k in ("tp", "cp", "pp", "dp") if getattr(p, k) > 1]  # type: ignore[misc]
    return kinds + ["node"]


def _clusters_out(col: _Collected, cluster_of: list[int], healthy: set[int]) -> list[StackCluster]:
    members: dict[int, list[_Sample]] = defaultdict(list)
    for s in col.samples:
        members[cluster_of[s.sig]].append(s)
    ordered = sorted(members, key=lambda c: (c not in healthy, -len(members[c]), c))
    main = next((c for c in ordered if c in healthy), None)
    main_coll = None
    if main is not None:
        main_coll = find_collective(col.python_sigs[_representative(members[main])])
    out: list[StackCluster] = []
    for n, c in enumerate(ordered, start=1):
        ss = members[c]
        rep = _representative(ss)
        exact = {s.sig for s in ss}
        py = col.python_sigs[rep]
        collective, call_site = find_collective(py)
        state: FrState = "matched"
        if c not in healthy and main_coll is not None:
            if collective is None:
                state = "not_joined"
            elif collective != main_coll[0]:
                state = "type_mismatch"
            elif call_site != main_coll[1]:
                state = "callsite_mismatch"
        elif c not in healthy and collective is None:
            state = "not_joined"
        ranks = sorted({s.rank for s in ss if s.rank is not None})
        frames = col.frames[rep]
        sample = next((s for s in ss if s.sig == rep and s.line), None)
        at = (sample.file, sample.line) if sample else None
        end = sample.end_line if sample and sample.end_line > sample.line else None
        out.append(StackCluster(
            id=f"c{n}", signature=hashlib.sha1("\n".join(col.signatures[rep]).encode()).hexdigest()[:10],
            role="healthy" if c in healthy else "outlier", ranks=ranks, ranks_text=rank_ranges(ranks),
            hosts=sorted({s.host for s in ss if s.host}), samples=len(ss), exact_signatures=len(exact),
            top=py[0] if py else (col.signatures[rep][0] if col.signatures[rep] else "?"), top_at=at, top_end=end,
            collective=collective, call_site=call_site, fr_state=state,
            stack=[StackFrameOut(function=f.function, file=shorten_path(f.file, f.native), line=f.line or None,
                                 native=f.native) for f in frames[:60]],
            files=sorted({s.file for s in ss})[:3]))
    return out


def _representative(samples: list[_Sample]) -> int:
    return Counter(s.sig for s in samples).most_common(1)[0][0]


def _eviction(groups: _Groups, tallies: dict[GroupKey, _GroupTally], behind: list[int], without_dump: list[int],
              rounds: int, varying: bool) -> Eviction | None:
    job = groups.job
    basis = "stack outliers"
    if not tallies and without_dump and len(without_dump) <= max(job.gpus_per_node, _largest_group(job)):
        # every dumped rank agrees: the ranks that could not be dumped are the odd ones (process or host gone)
        for rank in without_dump:
            for key in groups.keys(rank, job.host_of(rank)):
                tallies[key].outliers += 1
        tallies[_pick(tallies, "outliers")].flags += 1  # type: ignore[index]
        behind, basis = without_dump, "ranks with no stack dump"
    best = _pick(tallies, "z" if varying else "outliers")
    if best is None:
        return None
    if varying and tallies[best].z < chance_level(len(tallies)):
        return None  # no group stands out more than the largest of that many healthy groups would by chance
    kind, hosts_t = best
    hosts = list(hosts_t)
    ranks = sorted(r for h in hosts for r in job.host_to_ranks.get(h, []))
    inside = set(ranks)
    unexplained = [r for r in behind if r not in inside]
    t = tallies[best]
    cands = sorted(tallies, key=lambda k: (-tallies[k].z, -tallies[k].outliers, len(k[1])))[:5] if varying else \
        sorted(tallies, key=lambda k: (-tallies[k].outliers, len(k[1])))[:5]
    gid = groups.label(best)
    label = f"{kind.upper()} group {gid}" if kind != "node" else f"node {gid}"
    span = f"{len(hosts)} machine{'s' if len(hosts) != 1 else ''} ({', '.join(hosts[:8])}{', ...' if len(hosts) > 8 else ''})"
    if varying:
        why = (f"Over {rounds} dump rounds (fail-slow), {label} stood out most: {t.outliers} outlier samples of "
               f"{t.samples} ({t.z:.1f} standard deviations above the job's base rate), and it was the top group in "
               f"{t.flags} round(s). ByteRobust over-evicts the group flagged most across rounds; the counts are "
               f"kept and compared with the base rate so that healthy ranks caught mid-compute do not outvote it.")
    else:
        why = f"The {basis} ({len(behind)} rank(s): {rank_ranges(behind)}) fall in {label}."
    covered = len(behind) - len(unexplained)
    why += f" {label} spans {span}; evicting it covers {covered} of {len(behind)} outlier rank(s)"
    why += "." if not unexplained else f"; {len(unexplained)} outlier rank(s) lie outside it ({rank_ranges(unexplained)})."
    return Eviction(kind=kind, group_id=gid, ranks=ranks, hosts=hosts, machine_count=len(hosts),
                    outlier_ranks=behind, unexplained_ranks=unexplained, rounds=max(rounds, 1),
                    rounds_flagged=t.flags, reasoning=why,
                    candidates=[GroupCandidate(kind=k[0], group_id=groups.label(k), outliers=tallies[k].outliers,
                                               rounds_flagged=tallies[k].flags, machines=len(k[1])) for k in cands])


def chance_level(groups: int) -> float:
    """The z a group must pass to count: the expected largest of `groups` standard normals, plus half a sigma."""
    return math.sqrt(2.0 * math.log(max(groups, 2))) + 0.5


def _largest_group(job: Job) -> int:
    p = job.parallelism
    return max(p.tp, p.pp, p.dp, p.cp) if p is not None else job.gpus_per_node


def _fr_summary(job: Job, clusters: list[StackCluster], behind: list[int], without_dump: list[int]) -> FrSummary:
    healthy = [c for c in clusters if c.role == "healthy"]
    main = healthy[0] if healthy else None
    not_joined = sorted({r for c in clusters if c.role == "outlier" and c.fr_state == "not_joined" for r in c.ranks}
                        & set(behind))
    states = [FrClusterState(cluster=c.id, state=c.fr_state, collective=c.collective, ranks_text=c.ranks_text,
                             rank_count=len(c.ranks)) for c in clusters if c.role == "outlier"]
    coll = main.collective if main else None
    n_healthy = sum(len(c.ranks) for c in healthy)
    if coll is not None:
        text = f"{n_healthy} rank(s) wait in {coll}" + (f" (called from {main.call_site})" if main and main.call_site else "")
    elif main is not None:
        text = f"{n_healthy} rank(s) share one stack at {main.top}, in no collective"
    else:
        text = "no healthy majority"
    if behind:
        text += f"; not all ranks joining: {len(behind)} behind ({rank_ranges(behind)} on {', '.join(job.hosts_of(behind)[:8])})"
        if not_joined:
            text += f"; {rank_ranges(not_joined)} in no collective at all (compute or host code): likely the culprit"
        mism = [s for s in states if s.state == "type_mismatch"]
        if mism:
            text += "; " + "; ".join(f"{s.ranks_text} wait in {s.collective} instead (COLLECTIVE_TYPE_MISMATCH)"
                                     for s in mism[:3])
    else:
        text += "; every dumped rank is there"
    if without_dump:
        text += f"; {len(without_dump)} rank(s) have no dump ({rank_ranges(without_dump)})"
    return FrSummary(collective=coll, call_site=main.call_site if main else None, healthy_ranks=n_healthy,
                     behind_ranks=behind, behind_hosts=job.hosts_of(behind), not_joined_ranks=not_joined,
                     ranks_without_dump=without_dump, states=states, text=text)


def _suspects(job: Job, col: _Collected, cluster_of: list[int], healthy: set[int], outlier_rounds: Counter[int],
              rank_rounds: Counter[int], eviction: Eviction | None, clusters: list[StackCluster],
              without_dump: list[int]) -> list[StackSuspect]:
    """Hosts ranked: in the eviction set, share of their ranks that are outliers, ranks in no collective."""
    not_joined = {r for c in clusters if c.role == "outlier" and c.fr_state == "not_joined" for r in c.ranks}
    files: dict[str, list[str]] = defaultdict(list)
    for s in col.samples:
        if s.host and cluster_of[s.sig] not in healthy and len(files[s.host]) < 3 and s.file not in files[s.host]:
            files[s.host].append(s.file)
    per_host: dict[str, list[int]] = defaultdict(list)
    for rank in set(outlier_rounds) | set(without_dump):
        host = job.host_of(rank)
        if host is not None:
            per_host[host].append(rank)
    evicted = set(eviction.hosts) if eviction else set()
    out = []
    for host, ranks in per_host.items():
        total = len(job.host_to_ranks.get(host, [])) or len(ranks)
        share = sum(outlier_rounds[r] / max(rank_rounds[r], 1) if r in rank_rounds else 1.0 for r in ranks) / total
        culprit = [r for r in ranks if r in not_joined or r in without_dump]
        score = round(0.4 * (host in evicted) + 0.3 * min(share, 1.0) + 0.3 * bool(culprit), 3)
        bits = [f"{len(ranks)} of {total} rank(s) are stack outliers ({rank_ranges(sorted(ranks))})"]
        if culprit:
            bits.append(f"{rank_ranges(sorted(culprit))} in no collective or without a dump")
        if host in evicted:
            bits.append(f"in the eviction set ({eviction.kind.upper() if eviction else ''} group)")
        out.append(StackSuspect(host=host, score=score, reason="; ".join(bits), files=files.get(host, [])))
    return sorted(out, key=lambda s: (-s.score, s.host))[:20]


def _note(f: StackFindings) -> str:
    healthy = sum(1 for c in f.clusters if c.role == "healthy")
    text = (f"{f.ranks} rank(s) in {f.rounds} round(s) from {f.files} file(s): {len(f.clusters)} cluster(s), "
            f"{healthy} healthy")
    if f.eviction:
        text += f"; evict {f.eviction.kind.upper()} group {f.eviction.group_id} ({f.eviction.machine_count} machine(s))"
    elif any(c.role == "outlier" for c in f.clusters):
        text += ("; outliers, but no parallel group holds more of them than chance would (fail-slow samples too few "
                 "or too noisy): no eviction from stacks; take more dump rounds or trust the probes")
    else:
        text += "; no outliers: every rank is where its peers are"
    if f.skipped or f.skipped_dumps:
        text += f"; skipped {f.skipped} odd line(s) and {f.skipped_dumps} empty dump(s)"
    if f.unusable_files:
        text += (f"; {f.unusable_files} file(s) unusable, so {len(f.unknown_ranks)} rank(s) are of unknown state "
                 f"({rank_ranges(f.unknown_ranks)})")
    return text


def rank_ranges(ranks: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> '0-2,5,7-8'."""
    out: list[str] = []
    start = prev = None
    for r in sorted(set(ranks)):
        if start is None:
            start = prev = r
        elif r == prev + 1:  # type: ignore[operator]
            prev = r
        else:
            out.append(f"{start}-{prev}" if start != prev else str(start))
            start = prev = r
    if start is not None:
        out.append(f"{start}-{prev}" if start != prev else str(start))
    return ",".join(out)


__all__ = ["Eviction", "FrSummary", "StackCluster", "StackFindings", "StackSuspect", "analyze_stacks",
           "cluster_signatures", "find_collective", "normalize_frame", "rank_ranges", "shorten_path"]
