"""Raw logs in, a bundle out: log files, a directory, a .tar.gz / .zip or standard input, with no job.yaml needed.

One streaming pass routes each line, kept whole, to a per-rank or per-host file by its launcher prefix; job.yaml says
what was inferred (its `inferred:` notes reach the diagnosis).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

import yaml

from diagagent.telemetry.errors import BundleError, ReadIssue
from diagagent.telemetry.limits import ReadBudget, ReadLimits
from diagagent.telemetry.readers import MAX_LINE_BYTES, _compressed_blocks, _size, _Stop

if TYPE_CHECKING:
    from diagagent.telemetry.bundle import Bundle
    from diagagent.telemetry.store import JobSource

BLOCK = 1 << 22  # bytes read at a time
FLUSH_BYTES = 32 << 20  # routed lines held before they are written out
OPEN_FILES = 256  # output files kept open at once (more are reopened to append)
SAMPLE_LINES = 2000  # non-blank lines that decide a stream's prefix format
ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")
_LOG_EXT = (".log", ".txt", ".out", ".err", ".jsonl", ".ndjson")
_NOT_LOGS = ("job.yaml", "job.yml", "truth.json")
_PARTS_AS_IS = ("probes", "stacks", "flows")  # a directory laid out like a bundle: these are copied unchanged


@dataclass(frozen=True)
class Format:
    """A launcher's line prefix: what it names (a rank or a host) and which regex groups hold it."""

    name: str
    label: str  # as the notes say it: "srun -l prefixes"
    pattern: re.Pattern[bytes]
    names: str  # "rank" | "host"


# Ray's driver log holds every worker's output behind the worker's prefix, coloured on a terminal:
# "(RayTrainWorker pid=2211, ip=10.0.0.10) ...", the raylet's "(raylet, ip=10.0.7.57) ..." (dev:ray-47461)
RAY_WORKER = re.compile(rb"(?:\x1b\[[\d;]*m)?\([\w.:-]+(?: pid=\d+)?, ip=([\d.]+|[0-9a-fA-F:]+)\)(?:\x1b\[[\d;]*m)? ?")
FORMATS = (
    Format("srun", "srun -l prefixes", re.compile(rb" *(\d{1,7}): "), "rank"),
    Format("openmpi", "OpenMPI --tag-output prefixes", re.compile(rb"\[\d+,(\d{1,7})\]<std(?:out|err)>: ?"), "rank"),
    Format("kubectl", "kubectl --prefix prefixes", re.compile(rb"\[pod/([\w.-]+)/[\w.-]+\] "), "host"),
    Format("pdsh", "pdsh / DeepSpeed launcher prefixes",
           re.compile(rb"([A-Za-z0-9][A-Za-z0-9.-]*[0-9-][A-Za-z0-9.-]*|\d+\.\d+\.\d+\.\d+): "), "host"),
    Format("ray", "Ray worker prefixes", RAY_WORKER, "host"),
    # a stream of NCCL_DEBUG output from several hosts: "node-017:1234:5678 [3] NCCL INFO ..." on (nearly) every line
    Format("nccl", "NCCL headers", re.compile(rb"([A-Za-z0-9][\w.-]*):\d+:\d+ \[\d+\] "), "host"),
)
# torchrun's own prefixes need no routing: the bundle reader takes each line's rank from them
_TORCHRUN = re.compile(rb"\[(rank|default)(\d{1,7})\]:")
# NCCL's header names the host: "node-017:1234:5678 [3] NCCL WARN ..."
_NCCL_HOST = re.compile(rb"([A-Za-z0-9][\w.-]*):\d+:\d+ \[\d+\] NCCL ")
# srun's own summary names a task's host: "srun: error: node-3: task 12: Exited with exit code 1"
_SRUN_TASKS = re.compile(rb"srun: error: ([\w.-]+): tasks? ([\d,-]+): ")
_LEAD_WORD = re.compile(rb"([A-Za-z0-9][\w.-]*)[:\s]")  # a line's first word, which may be a host already seen
_SAFE_NAME = re.compile(r"[^\w.-]")


@dataclass
class Source:
    """One raw input: how to open its bytes, what to call it, and what its place says (a host folder)."""

    display: str
    open: Callable[[], IO[bytes]]
    host_hint: str | None = None  # the folder above it, in a directory of logs
    part_rel: str | None = None  # a bundle part's file (probes/...), copied unchanged


@dataclass
class _Facts:
    """What one build learned; becomes job.yaml's nodes and its `inferred:` notes."""

    rank_host: dict[int, str] = field(default_factory=dict)
    host_ranks: dict[str, set[int]] = field(default_factory=dict)
    hosts: dict[str, None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    tasks: set[int] = field(default_factory=set)  # srun labels that are tasks (one torchrun per node), not ranks
    launchers: list[tuple[str, str]] = field(default_factory=list)  # (staged file of unprefixed lines, its host)
    methods: dict[str, None] = field(default_factory=dict)  # how hosts and ranks were found, for the head note
    sources: list[str] = field(default_factory=list)
    bytes: int = 0


class _Outputs:
    """Routed lines, buffered and appended to their files; at most OPEN_FILES files open at once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.buffers: dict[str, list[bytes]] = {}
        self.handles: dict[str, IO[bytes]] = {}
        self.pending = 0
        self.written: set[str] = set()

    def buffer(self, rel: str) -> list[bytes]:
        buf = self.buffers.get(rel)
        if buf is None:
            buf = self.buffers[rel] = []
        return buf

    def flush(self) -> None:
        for rel, buf in self.buffers.items():
            if not buf:
                continue
            f = self.handles.get(rel)
            if f is None:
                if len(self.handles) >= OPEN_FILES:
                    self.handles.pop(next(iter(self.handles))).close()
                path = self.root / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                f = self.handles[rel] = path.open("ab")
                self.written.add(rel)
            buf.append(b"")
            f.write(b"\n".join(buf))
            buf.clear()
        self.pending = 0

    def close(self) -> None:
        self.flush()
        for f in self.handles.values():
            f.close()
        self.handles.clear()


# --- inputs ---------------------------------------------------------------------------------------------------


def expand(targets: Sequence[str | Path], stdin: IO[bytes] | None = None) -> Iterator[Source]:
    """Every raw input the targets name: files, globs, directories (walked), and `-` (standard input)."""
    for target in targets:
        text = str(target)
        if text == "-":
            if stdin is None:
                raise BundleError("-", "standard input was named but none is given")
            yield Source("(stdin)", lambda s=stdin: s if hasattr(s, "peek") else io.BufferedReader(s))
            continue
        path = Path(text).expanduser()
        if not path.exists() and any(c in text for c in "*?["):
            matches = sorted(Path(p) for p in _glob(text))
            if not matches:
                raise BundleError(text, "no file matches this pattern")
            for m in matches:
                yield from expand([m])
            continue
        if not path.exists():
            raise BundleError(text, "no such file or directory (expected log files, a directory of logs, a "
                                    ".tar.gz / .zip of them, or - for standard input)")
        if path.is_dir():
            yield from _walk(path, text)
        else:
            yield Source(text, lambda p=path: p.open("rb"))


def _glob(pattern: str) -> list[str]:
    import glob

    return glob.glob(os.path.expanduser(pattern), recursive=True)


def _walk(root: Path, display: str) -> Iterator[Source]:
    """The files of a directory of logs (hidden ones and job.yaml / truth.json left out). A file one folder down is
    that host's; a directory laid out like a bundle (logs/<host>/..., probes/...) is read as one."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and not any(s.startswith(".") for s in
                                                                           p.relative_to(root).parts))
    for p in files:
        rel = p.relative_to(root).parts
        if rel[-1] in _NOT_LOGS:
            continue
        shown = f"{display.rstrip('/')}/{'/'.join(rel)}"
        if rel[0] in _PARTS_AS_IS and len(rel) > 1:
            yield Source(shown, lambda p=p: p.open("rb"), part_rel="/".join(rel))
            continue
        if rel[0] == "logs" and len(rel) > 1:
            rel = rel[1:]
        yield Source(shown, lambda p=p: p.open("rb"), host_hint=rel[0] if len(rel) > 1 else None)


def _extract_zip(source: Path, dest: Path, limits: ReadLimits, issues: list[ReadIssue]) -> None:
    """Unpack a .zip member by member (streamed), within limits.tar_bytes / tar_members; unsafe names skipped."""
    total, refused = 0, []
    with zipfile.ZipFile(source) as zf:
        for n, info in enumerate(zf.infolist()):
            if n >= limits.tar_members:
                issues.append(ReadIssue(file=source.name, kind="budget", problem=f"over limits.tar_members "
                                        f"({limits.tar_members:,}): the members after skipped"))
                break
            if info.is_dir():
                continue
            target = (dest / info.filename).resolve()
            if info.filename.startswith(("/", "\\")) or not target.is_relative_to(dest.resolve()):
                refused.append(info.filename)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, target.open("wb") as out:
                while chunk := src.read(BLOCK):
                    total += len(chunk)
                    if total > limits.tar_bytes:
                        issues.append(ReadIssue(file=source.name, kind="budget", problem=f"over limits.tar_bytes "
                                                f"({limits.tar_bytes:,} bytes): {info.filename} cut, the rest skipped"))
                        return
                    out.write(chunk)
    if refused:
        issues.append(ReadIssue(file=source.name, kind="link", count=len(refused),
                                problem=f"unsafe zip member(s) skipped: {'; '.join(refused[:5])}"))


@contextmanager
def unpacked(archive: Path, limits: ReadLimits, issues: list[ReadIssue]) -> Iterator[Path]:
    """A .tar.gz / .tgz / .tar / .zip unpacked (safely, within limits) into a temporary folder, removed after."""
    from diagagent.telemetry.bundle import _extract

    tmp = Path(tempfile.mkdtemp(prefix="diagagent-raw-"))
    try:
        try:
            if archive.name.endswith(".zip"):
                _extract_zip(archive, tmp, limits, issues)
            else:
                _extract(archive, tmp, limits, issues)
        except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
            raise BundleError(str(archive), f"cannot unpack the archive: {exc}") from exc
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- reading one stream ------------------------------------------------------------------------------------------


def _blocks(raw: IO[bytes], src: Source, issues: list[ReadIssue], budget: ReadBudget,
            facts: _Facts) -> Iterator[bytes]:
    """Decompressed blocks of one input (gzip, zstd or plain, told by its first bytes), to the read budgets."""
    head = raw.peek(4)[:4] if hasattr(raw, "peek") else b""
    kind = "gz" if head[:2] == b"\x1f\x8b" else "zst" if head == b"\x28\xb5\x2f\xfd" else ""
    blocks = _compressed_blocks(raw, kind, BLOCK) if kind else iter(lambda: raw.read(BLOCK), b"")
    limits, read = budget.limits, 0
    try:
        for data in blocks:
            room = min(limits.file_bytes - read, budget.bytes_left)
            if len(data) > room:
                if room > 0:
                    yield data[:room]
                which = "file_bytes" if limits.file_bytes - read <= budget.bytes_left else "bundle_bytes"
                raise _Stop("budget", f"read budget limits.{which} reached")
            read += len(data)
            budget.bytes_left -= len(data)
            facts.bytes += len(data)
            yield data
    except _Stop as exc:
        issues.append(ReadIssue(file=src.display, kind=exc.kind,
                                problem=f"{exc.reason}: read {_size(read)} before it, the rest skipped"))
    except OSError as exc:
        issues.append(ReadIssue(file=src.display, kind="truncated", problem=f"read error ({exc.strerror or exc}); "
                                                                            f"read {_size(read)} before it"))


def _line_blocks(blocks: Iterator[bytes], src: Source, issues: list[ReadIssue]) -> Iterator[list[bytes]]:
    """The lines of a stream of blocks, block by block (without their newlines); a line over MAX_LINE_BYTES is cut
    there (and counted)."""
    tail, cut, first_cut, lineno = b"", 0, 0, 0
    for data in blocks:
        data = tail + data if tail else data
        end = data.rfind(b"\n")
        if end < 0:
            tail = data
            if len(tail) > MAX_LINE_BYTES:  # keep the start of a very long line; drop the rest up to its newline
                cut, first_cut = cut + 1, first_cut or lineno + 1
                yield [tail[:MAX_LINE_BYTES]]
                lineno += 1
                tail = b""
                for more in blocks:
                    nl = more.find(b"\n")
                    if nl >= 0:
                        tail = more[nl + 1:]
                        break
            continue
        lines = data[:end].split(b"\n")
        tail = data[end + 1:]
        if len(data) > MAX_LINE_BYTES and max(map(len, lines)) > MAX_LINE_BYTES:
            for i, line in enumerate(lines):
                if len(line) > MAX_LINE_BYTES:
                    lines[i] = line[:MAX_LINE_BYTES]
                    cut, first_cut = cut + 1, first_cut or lineno + i + 1
        lineno += len(lines)
        yield lines
    if tail:
        yield [tail[:MAX_LINE_BYTES]]
    if cut:
        issues.append(ReadIssue(file=src.display, line=first_cut, count=cut,
                                problem=f"line longer than {MAX_LINE_BYTES} bytes, cut there"))


def _detect(sample: list[bytes]) -> Format | None:
    """The launcher format most of the sample's non-blank lines carry, or None (plain lines)."""
    lines = [line for line in sample if line.strip()]
    if not lines:
        return None
    best, best_n = None, 0
    for fmt in FORMATS:
        keys: dict[bytes, int] = {}
        for line in lines:
            m = fmt.pattern.match(line)
            if m:
                keys[m.group(1)] = keys.get(m.group(1), 0) + 1
        n = sum(keys.values())
        if fmt.name == "pdsh" and len(keys) > max(2, n // 2):  # host names repeat; a word before ": " varies
            continue
        if n > best_n:
            best, best_n = fmt, n
    return best if best_n * 2 >= len(lines) else None


def _out_name(display: str) -> str:
    name = Path(display).name if display != "(stdin)" else "stdin"
    for ext in (".gz", ".zst", ".zstd"):
        name = name.removesuffix(ext)
    name = _SAFE_NAME.sub("_", name).lstrip(".") or "log"
    return name if name.endswith(_LOG_EXT) else name + ".log"


def _host_name(raw: bytes | str) -> str:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    return _SAFE_NAME.sub("_", text).strip(".") or "host"


def _tasks(spec: bytes) -> list[int]:
    out: list[int] = []
    for part in spec.split(b","):
        lo, _, hi = part.partition(b"-")
        if lo.isdigit() and (not hi or hi.isdigit()) and int(hi or lo) - int(lo) < 1 << 16:
            out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def _route(src: Source, raw: IO[bytes], outs: _Outputs, facts: _Facts, issues: list[ReadIssue],
           budget: ReadBudget) -> None:
    """One input's lines, each kept whole, to `logs/<host>/rank-<N>.<ext>` (a rank prefix), `logs/<host>/<name>`
    (a host prefix or a plain file), the launcher's own lines to `logs/<name>`."""
    name = _out_name(src.display)
    stem, ext = name.rsplit(".", 1)
    lines_iter = _line_blocks(_blocks(raw, src, issues, budget, facts), src, issues)
    sample: list[bytes] = []
    filled = 0
    for lines in lines_iter:
        sample.extend(lines)
        filled += sum(1 for line in lines if line.strip())
        if filled >= SAMPLE_LINES or len(sample) >= SAMPLE_LINES * 8:  # a block at most, blank lines or not
            break
    fmt = _detect(sample[:SAMPLE_LINES * 8])
    if fmt is not None and fmt.name == "nccl" and (src.host_hint or len(
            {m.group(1) for line in sample if (m := fmt.pattern.match(line))}) < 2):
        fmt = None  # one host's NCCL output (its folder or its lines say which): kept whole
    blocks = _chain([sample], lines_iter)
    if fmt is None:
        _route_plain(src, blocks, outs, facts, name)
        return
    match, by_rank = fmt.pattern.match, fmt.names == "rank"
    # `srun -l torchrun ...`: one task per node, whose ranks print "[rankN]:" after the label; the label is a task
    tasks = fmt.name == "srun" and _inner_torchrun(sample, fmt)
    unit = "task" if tasks else "rank"
    other = f".staged/launcher/{len(facts.sources)}/{name if by_rank else f'{stem}.launcher.{ext}'}"
    rel_of: dict[bytes, str] = {}  # prefix key -> staged output file
    unhosted: set[bytes] = set()  # rank keys whose host no line has named yet
    task_hosts: dict[int, str] = {}
    follow: str | None = None  # (NCCL headers) the file of the last line with a header
    placed: dict[int, str] = {}  # (host prefixes) a rank's host, by the first line that names both
    for lines in blocks:
        size = 0
        for line in lines:
            m = match(line)
            if m is None:
                w = None if by_rank else _LEAD_WORD.match(line)
                if w is not None and w.group(1) in rel_of:  # "gpu5: Test NCCL failure ..." in a stream split by host
                    outs.buffer(rel_of[w.group(1)]).append(line)
                    continue
                if follow is not None:  # NCCL output: a line without a header is its process's, like the one before
                    outs.buffer(follow).append(line)
                    continue
                outs.buffer(other).append(line)
                if by_rank and b"srun: error: " in line:
                    t = _SRUN_TASKS.search(line)
                    if t:
                        task_hosts.update(dict.fromkeys(_tasks(t.group(2)), _host_name(t.group(1))))
                continue
            key = m.group(1)
            rel = rel_of.get(key)
            if rel is None:
                if by_rank:
                    rel = rel_of[key] = f".staged/{int(key)}/{unit}-{int(key)}.{stem}.{ext}"
                    if tasks:
                        facts.tasks.add(int(key))
                    unhosted.add(key)
                else:
                    host = _host_name(key)
                    facts.hosts.setdefault(host, None)
                    rel = rel_of[key] = f"logs/{host}/{name}"
            outs.buffer(rel).append(line)
            if not by_rank and line.startswith(b"[rank", m.end()):  # torchrun's rank behind a host's prefix
                t = _TORCHRUN.match(line, m.end())
                if t is not None:
                    placed.setdefault(int(t.group(2)), rel.split("/")[1])
            if fmt.name == "nccl":
                follow = rel
            size += len(line)
            if key in unhosted and b"NCCL " in line:
                h = _NCCL_HOST.search(line, m.end())
                if h:
                    facts.rank_host.setdefault(int(key), _host_name(h.group(1)))
                    unhosted.discard(key)
        outs.pending += size
        if outs.pending > FLUSH_BYTES:
            outs.flush()
    for rank, host in placed.items():
        if rank not in facts.rank_host:
            facts.rank_host[rank] = host
            facts.host_ranks.setdefault(host, set()).add(rank)
    if placed:
        facts.methods.setdefault("ranks from torchrun's [rankN] after them", None)
    from_srun = from_folder = 0
    if by_rank:
        for key in rel_of:
            rank = int(key)
            if rank not in facts.rank_host and rank in task_hosts:
                facts.rank_host[rank] = task_hosts[rank]
                from_srun += 1
            elif rank not in facts.rank_host and src.host_hint:  # the folder it was found in names its host
                facts.rank_host[rank] = _host_name(src.host_hint)
                from_folder += 1
    facts.notes.append(f"{src.display}: {_n(len(rel_of), unit if by_rank else 'host')} told apart by {fmt.label}"
                       + (" (each task runs torchrun: its ranks say [rankN] after the label)" if tasks else ""))
    if other in outs.buffers:  # the launcher's own lines: it runs on the first node (Slurm's batch host runs task 0)
        first = min(map(int, rel_of)) if by_rank and rel_of else None
        host = facts.rank_host.get(first, "unknown-host") if by_rank else \
            (_host_name(next(iter(rel_of))) if rel_of else "unknown-host")
        facts.launchers.append((other, host))
    facts.methods.setdefault(fmt.label, None)
    if by_rank and any(int(k) in facts.rank_host for k in rel_of):
        from_nccl = sum(1 for k in rel_of if k not in unhosted)
        said = " and ".join(w for n, w in ((from_nccl, "NCCL lines"), (from_srun, "srun's error summaries"),
                                           (from_folder, "folder names")) if n)
        facts.methods.setdefault(f"hosts from {said}", None)
    facts.sources.append(src.display)


def _inner_torchrun(sample: list[bytes], fmt: Format) -> bool:
    """Whether most labelled lines of the sample carry torchrun's [rankN]: / [defaultN]: after the label."""
    labelled = inner = 0
    for line in sample:
        m = fmt.pattern.match(line)
        if m:
            labelled += 1
            inner += _TORCHRUN.match(line, m.end()) is not None
    return labelled > 0 and inner * 2 >= labelled


def _chain(first: list[list[bytes]], rest: Iterator[list[bytes]]) -> Iterator[list[bytes]]:
    yield from first
    yield from rest


def _route_plain(src: Source, blocks: Iterator[list[bytes]], outs: _Outputs, facts: _Facts, name: str) -> None:
    """A file with no launcher prefix: one file of one host (named by its folder, its NCCL lines, or its name)."""
    rel = f".staged/plain/{len(facts.sources)}/{name}"
    nccl: dict[str, None] = {}
    ranks: dict[str, set[int]] = {"rank": set(), "default": set()}
    for lines in blocks:
        buf = outs.buffer(rel)
        buf.extend(lines)
        for line in lines:
            if line[:1] == b"[" and (t := _TORCHRUN.match(line)):
                ranks[t.group(1).decode()].add(int(t.group(2)))
            elif b"NCCL " in line and len(nccl) < 64 and (h := _NCCL_HOST.match(line)):
                nccl.setdefault(_host_name(h.group(1)), None)
        outs.pending += sum(map(len, lines))
        if outs.pending > FLUSH_BYTES:
            outs.flush()
    if src.host_hint:
        host, why = _host_name(src.host_hint), "folder names"
    elif nccl:
        host, why = next(iter(nccl)), "NCCL lines"
    else:
        host, why = _host_name(name.rsplit(".", 1)[0]), "file names"
    facts.hosts.setdefault(host, None)
    facts.sources.append(src.display)
    outs.flush()
    final = f"logs/{host}/{name}"
    final = _free(outs.root, final)
    outs.buffers.pop(rel, None)
    if rel in outs.written:
        handle = outs.handles.pop(rel, None)
        if handle is not None:
            handle.close()
        (outs.root / final).parent.mkdir(parents=True, exist_ok=True)
        os.replace(outs.root / rel, outs.root / final)
    said = f"{src.display}: no launcher prefix, read as one stream of host {host} (from {why})"
    if len(nccl) > 1:
        said += f"; its NCCL lines name {len(nccl)} hosts ({', '.join(list(nccl)[:4])}), which unprefixed lines " \
                "cannot be told apart by"
    if ranks["rank"]:
        facts.host_ranks.setdefault(host, set()).update(ranks["rank"])
        said += f"; {_n(len(ranks['rank']), 'rank')} from torchrun [rankN] prefixes"
        facts.methods.setdefault("torchrun [rankN] prefixes", None)
    elif ranks["default"]:
        _local_ranks(facts, host, max(ranks["default"]) + 1)
        said += f"; {len(ranks['default'])} local ranks from torchrun [defaultN] prefixes (global ranks assumed " \
                "in the order the hosts were read)"
        facts.methods.setdefault("torchrun [defaultN] prefixes", None)
    facts.methods.setdefault(f"hosts from {why}", None)
    facts.notes.append(said)


def _local_ranks(facts: _Facts, host: str, n: int) -> None:
    """Global ranks for a host's torchrun local ranks: the next free block of `n` (hosts in the order read)."""
    taken = set(facts.rank_host) | {r for rs in facts.host_ranks.values() for r in rs}
    start = max(taken) + 1 if taken else 0
    facts.host_ranks.setdefault(host, set()).update(range(start, start + n))


def _free(root: Path, rel: str) -> str:
    """`rel`, or `rel` with .2, .3 ... before its extension when a file of that name is already there."""
    if not (root / rel).exists():
        return rel
    base, ext = rel.rsplit(".", 1)
    n = 2
    while (root / f"{base}.{n}.{ext}").exists():
        n += 1
    return f"{base}.{n}.{ext}"


# --- the bundle ------------------------------------------------------------------------------------------------


def _place_ranks(root: Path, facts: _Facts) -> None:
    """Staged per-rank files into their host's folder (`logs/<host>/rank-N...`); ranks no line placed go under host
    `unknown-host`."""
    staged = root / ".staged"
    if not staged.is_dir():
        return
    unknown: list[int] = []
    for rel, host in facts.launchers:
        if (root / rel).is_file():
            final = _free(root, f"logs/{host}/{rel.rsplit('/', 1)[1]}")
            (root / final).parent.mkdir(parents=True, exist_ok=True)
            os.replace(root / rel, root / final)
            facts.hosts.setdefault(host, None)
            facts.notes.append(f"lines without a prefix (the launcher's own) put on {host}, the first node, where "
                               "the launcher runs")
    for folder in sorted(staged.iterdir()):
        if not folder.name.isdigit():
            continue
        rank = int(folder.name)
        host = facts.rank_host.get(rank)
        if host is None:
            host = "unknown-host"
            unknown.append(rank)
        facts.hosts.setdefault(host, None)
        if rank in facts.tasks:
            facts.host_ranks.setdefault(host, set())
        else:
            facts.host_ranks.setdefault(host, set()).add(rank)
        for f in sorted(folder.iterdir()):
            name = f.name.split(".", 1)[0] + "." + f.name.rsplit(".", 1)[1]  # rank-3.<stem>.out -> rank-3.out
            final = _free(root, f"logs/{host}/{name}")
            (root / final).parent.mkdir(parents=True, exist_ok=True)
            os.replace(f, root / final)
    if unknown:
        facts.notes.append(f"no line names the host of {len(unknown)} rank(s) ({_span(unknown)}): filed under "
                           "unknown-host")
    shutil.rmtree(staged, ignore_errors=True)


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def _span(ranks: list[int]) -> str:
    ranks = sorted(ranks)
    return f"{ranks[0]}-{ranks[-1]}" if len(ranks) > 2 else ", ".join(map(str, ranks))


def _job_id(sources: list[str]) -> str:
    if not sources:
        return "raw-logs"
    name = Path(sources[0]).name if sources[0] != "(stdin)" else "stdin"
    m = re.search(r"slurm-(\d+(?:_\d+)?)", name)
    return m.group(1) if m else _out_name(name).rsplit(".", 1)[0]


def bundle_from_logs(targets: Sequence[str | Path], out_dir: Path, *, limits: ReadLimits | None = None,
                     stdin: IO[bytes] | None = None, job_id: str | None = None, status: str | None = None,
                     issues: list[ReadIssue] | None = None,
                     already_unpacked: dict[str, tuple[Path, list[ReadIssue]]] | None = None) -> Path:
    """Build a bundle in `out_dir` (created; must be empty) from raw logs: files, globs, directories, .tar.gz /
    .zip archives of them, `-` for `stdin`. Hosts and ranks come from the lines' launcher prefixes, NCCL headers,
    srun's summaries, folders and file names; job.yaml lists them and says in `inferred:` how they were found.
    Streams: at most FLUSH_BYTES of lines are held at once. Read problems go to `issues` (and job.yaml's notes).
    `already_unpacked` maps an archive target unpacked (by open_inputs) to its folder and what unpacking skipped."""
    limits = limits or ReadLimits()
    issues = issues if issues is not None else []
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise BundleError(str(out_dir), "not empty: a bundle is built into a new or empty folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    facts, budget = _Facts(), ReadBudget(limits)
    outs = _Outputs(out_dir)
    try:
        _read_all(targets, stdin, outs, facts, issues, budget, limits, out_dir, already_unpacked or {})
    finally:
        outs.close()
    _place_ranks(out_dir, facts)
    if not facts.sources:
        raise BundleError(", ".join(map(str, targets)) or "(no input)", "no log lines found in it")
    if status is None:
        facts.notes.insert(0, "raw logs do not say how the job ended: read as failed (--status hung or slow says "
                              "otherwise)")
    _write_job(out_dir, facts, issues, job_id or _job_id(facts.sources), status or "failed")
    return out_dir


def _read_all(targets: Sequence[str | Path], stdin: IO[bytes] | None, outs: _Outputs, facts: _Facts,
              issues: list[ReadIssue], budget: ReadBudget, limits: ReadLimits, out_dir: Path,
              already_unpacked: dict[str, tuple[Path, list[ReadIssue]]]) -> None:
    for target in targets:
        if str(target) in already_unpacked:
            folder, skipped = already_unpacked[str(target)]
            issues.extend(skipped)
            _read_sources(_walk(folder, str(target)), outs, facts, issues, budget, out_dir)
            continue
        path = Path(str(target)).expanduser()
        if str(target) != "-" and path.is_file() and path.name.endswith(ARCHIVES):
            with unpacked(path, limits, issues) as tmp:
                _read_sources(_walk(tmp, str(target)), outs, facts, issues, budget, out_dir)
            continue
        _read_sources(expand([target], stdin), outs, facts, issues, budget, out_dir)


def _read_sources(sources: Iterator[Source], outs: _Outputs, facts: _Facts, issues: list[ReadIssue],
                  budget: ReadBudget, out_dir: Path) -> None:
    for src in sources:
        if src.part_rel is not None:
            dest = out_dir / src.part_rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            with src.open() as f, dest.open("wb") as out:
                shutil.copyfileobj(f, out, BLOCK)
            continue
        try:
            raw = src.open()
        except OSError as exc:
            issues.append(ReadIssue(file=src.display, kind="truncated",
                                    problem=f"not readable ({exc.strerror or exc}), skipped"))
            continue
        try:
            if _binary(raw):
                issues.append(ReadIssue(file=src.display, problem="not text (NUL bytes in its first 4 KiB): skipped"))
                continue
            _route(src, raw, outs, facts, issues, budget)
        finally:
            if src.display != "(stdin)":
                raw.close()


def _binary(raw: IO[bytes]) -> bool:
    if not hasattr(raw, "peek"):
        return False
    head = raw.peek(4096)[:4096]
    return head[:2] != b"\x1f\x8b" and head[:4] != b"\x28\xb5\x2f\xfd" and b"\0" in head


def _write_job(root: Path, facts: _Facts, issues: list[ReadIssue], job_id: str, status: str) -> None:
    ranked = {h: sorted(rs) for h, rs in facts.host_ranks.items() if rs}
    nodes = [{"host": h, "ranks": ranked.get(h, [])} if ranked else {"host": h} for h in facts.hosts]
    n_ranks = sum(len(r) for r in ranked.values())
    head = f"no job.yaml: {_n(len(facts.hosts), 'host')}" + (f", {_n(n_ranks, 'rank')}" if n_ranks else "") + \
        (f", {_n(len(facts.tasks), 'srun task')}" if facts.tasks else "") + \
        f" inferred from {', '.join(facts.methods)} " \
        f"({len(facts.sources)} input(s), {_size(facts.bytes)})"
    inferred = [head] + facts.notes[:20]
    if len(facts.notes) > 20:
        inferred.append(f"{len(facts.notes) - 20} more input(s) read the same way")
    inferred += [str(i) for i in issues if i.lost][:10]
    job: dict = {"job_id": job_id, "name": job_id, "framework": "other", "status": status, "nodes": nodes,
                 "inferred": inferred, "sources": facts.sources[:100]}
    if ranked:
        job["gpus_per_node"] = max(len(r) for r in ranked.values())
    (root / "job.yaml").write_text(yaml.safe_dump(job, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _is_bundle_dir(p: Path) -> bool:
    return p.is_dir() and ((p / "job.yaml").is_file() or (p / "job.yml").is_file())


def _names_raw(target: str) -> bool:
    """Whether a target names raw input (a path, a pattern, stdin) rather than a job id."""
    return target == "-" or Path(target).expanduser().exists() or "/" in target or any(c in target for c in "*?[") \
        or target.endswith((*ARCHIVES, *_LOG_EXT, ".gz", ".zst"))


def open_inputs(targets: Sequence[str], jobs_dir: Path, limits: ReadLimits | None = None, save: Path | None = None,
                stdin: IO[bytes] | None = None, status: str | None = None, source: JobSource | None = None) -> Bundle:
    """What a command line names, opened as a bundle: a bundle (directory or tarball) or a job id as before, or raw
    logs (files, globs, a directory without job.yaml, a .tar.gz / .zip of logs, `-`) built into one; with `save`,
    the bundle is (built or copied) there to be re-run or shared, else into a temporary folder removed on close.
    `status` is the job's (failed, hung, slow) for raw logs, which do not say it; a bundle's job.yaml does. A job id
    is looked up in `source` (a live Slurm or Kubernetes, DIAGAGENT_JOB_SOURCE) when given, else under `jobs_dir`."""
    from diagagent.telemetry.bundle import TARBALLS, Bundle, unpack_tarball
    from diagagent.telemetry.store import JobStore

    if not targets:
        raise BundleError("(no input)", "nothing to read: give a bundle, a job id, log files, a directory or -")
    bundle: Bundle | None = None
    already_unpacked: dict[str, tuple[Path, list[ReadIssue]]] = {}
    if len(targets) == 1 and targets[0] != "-":
        p = Path(targets[0]).expanduser()
        if _is_bundle_dir(p):
            bundle = Bundle.open(p, limits)
        elif p.is_file() and p.name.endswith(TARBALLS):  # unpacked once: a bundle if it holds job.yaml, else raw
            tmpdir, tar_issues = unpack_tarball(p, limits or ReadLimits())
            try:
                bundle = Bundle.opened(tmpdir, p, limits or ReadLimits(), tar_issues, tmpdir=tmpdir)
            except BaseException as exc:
                no_job = isinstance(exc, BundleError) and exc.message.startswith("missing: every bundle needs a job")
                if not no_job:
                    shutil.rmtree(tmpdir, ignore_errors=True)
                    raise
                already_unpacked = {targets[0]: (tmpdir, tar_issues)}
        elif not _names_raw(targets[0]):
            bundle = (source or JobStore(jobs_dir, limits)).get(targets[0])
    if bundle is not None:
        if save is not None:
            with bundle:
                _copy_bundle(bundle.root, save)
            return Bundle.open(save, limits)
        return bundle
    for t in targets:
        p = Path(t).expanduser()
        if len(targets) > 1 and _is_bundle_dir(p):
            raise BundleError(t, "a bundle (it holds job.yaml) is diagnosed alone, not with other inputs")
    options = {"limits": limits, "stdin": stdin, "status": status, "already_unpacked": already_unpacked}
    try:
        if save is not None:
            return Bundle.open(bundle_from_logs(targets, save, **options), limits)
        tmp = Path(tempfile.mkdtemp(prefix="diagagent-raw-bundle-"))
        try:
            bundle_from_logs(targets, tmp / "bundle", **options)
            bundle = Bundle.open(tmp / "bundle", limits)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        bundle.own(tmp)
        return bundle
    finally:
        for tmpdir, _ in already_unpacked.values():
            shutil.rmtree(tmpdir, ignore_errors=True)


def _copy_bundle(root: Path, dest: Path) -> None:
    if dest.exists() and any(dest.iterdir()):
        raise BundleError(str(dest), "not empty: a bundle is saved into a new or empty folder")
    shutil.copytree(root, dest, symlinks=True, dirs_exist_ok=True)
