"""`Bundle`: one incident's telemetry (a directory or a .tar.gz), read as BUNDLE.md defines it.

Only `job.yaml` is required. Every other part may be missing: `Bundle.missing` says which, and readers stream.
"""

from __future__ import annotations

import copy
import os
import shutil
import tarfile
import tempfile
import weakref
import zlib
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Literal, Self

from diagagent.telemetry.errors import BundleError, ReadIssue
from diagagent.telemetry.job import Job
from diagagent.telemetry.limits import ReadBudget, ReadLimits
from diagagent.telemetry.readers import (
    LogFile,
    LogLine,
    PartFile,
    iter_flow_batches,
    iter_log_lines,
    iter_raw_lines,
    rank_from_name,
    read_text,
)
from diagagent.telemetry.truth import Truth

Part = Literal["logs", "flows", "stacks", "probes"]
TARBALLS = (".tar.gz", ".tgz", ".tar")
PARTS: tuple[Part, ...] = ("logs", "flows", "stacks", "probes")

# a log file's name: what launchers write (rank-3.log, node.out, worker.err, events.jsonl), and the stdout and stderr
# of Open MPI's --output-filename ('1/rank.9/stdout', its documented layout) and of YARN's containers
# ('container_e42_..._000002.stderr'; incidents ompi-outfile-horovod-roce-cqe-bond-4node and
# horovod-spark-petastorm-hdfs-blockmissing-4node)
_LOG_SUFFIXES = tuple(f"{base}{packing}" for base in (".log", ".txt", ".out", ".err", ".jsonl", ".ndjson", ".stdout",
                                                       ".stderr") for packing in ("", ".gz", ".zst"))
_LOG_NAMES = tuple(f"{base}{packing}" for base in ("stdout", "stderr") for packing in ("", ".gz", ".zst"))
_FLOW_SUFFIXES = (".csv", ".csv.gz", ".parquet")


def _strip_suffixes(name: str) -> str:
    for suffix in (".gz", ".zst", ".txt", ".json", ".jsonl", ".ndjson", ".log", ".out", ".err", ".stdout", ".stderr"):
        name = name.removesuffix(suffix)
    return name


class Bundle:
    """An opened incident bundle. Use as a context manager (a tarball is unpacked to a temp dir until closed)."""

    def __init__(self, root: Path, source: Path, job: Job, tmpdir: Path | None = None,
                 limits: ReadLimits | None = None, issues: list[ReadIssue] | None = None) -> None:
        self.root = root
        self.source = source
        self.job = job
        self.limits = limits or ReadLimits()
        self.issues: list[ReadIssue] = list(issues or [])
        self.budget = ReadBudget(self.limits)  # stacks, probes and other small files, read once each
        self._real_root = root.resolve()
        self._tmpdir = tmpdir
        if tmpdir is not None:
            self._finalizer = weakref.finalize(self, shutil.rmtree, tmpdir, True)

    # --- opening ---------------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path, limits: ReadLimits | None = None) -> Bundle:
        """Open a bundle directory, or a `.tar.gz` / `.tgz` of one. Raises BundleError if job.yaml is unusable."""
        limits = limits or ReadLimits()
        source = Path(path).expanduser()
        if not source.exists():
            raise BundleError(str(source), "no such bundle (expected a directory or a .tar.gz holding job.yaml)")
        if source.is_dir():
            return cls.opened(source, source, limits, [])
        if not source.name.endswith(TARBALLS):
            raise BundleError(str(source), "expected a bundle directory or a .tar.gz / .tgz of one")
        tmpdir, issues = unpack_tarball(source, limits)
        try:
            return cls.opened(tmpdir, source, limits, issues, tmpdir=tmpdir)
        except BaseException:
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise

    @classmethod
    def opened(cls, base: Path, source: Path, limits: ReadLimits, issues: list[ReadIssue],
               tmpdir: Path | None = None) -> Bundle:
        """The bundle in folder `base` (a directory, or with `tmpdir` a tarball unpacked there, which the bundle
        then owns; not removed when this raises). BundleError when job.yaml is missing or unusable."""
        root = _find_root(base) if tmpdir is not None else base
        try:
            job = _load_job(root, source, limits, issues)
        except BundleError as exc:
            cap = next((i.problem for i in issues if i.kind == "budget"), None)  # a tarball cut short
            if cap is not None:
                raise BundleError(exc.file, f"{exc.message} ({cap})", exc.line) from exc
            raise
        return cls(root, source, job, tmpdir, limits, issues)

    def own(self, tmpdir: Path) -> None:
        """Remove `tmpdir` (where this bundle was built) when the bundle is closed or collected."""
        self._tmpdir = tmpdir
        self._finalizer = weakref.finalize(self, shutil.rmtree, tmpdir, True)

    def close(self) -> None:
        if self._tmpdir is not None:
            self._finalizer()

    def view(self, budget: ReadBudget | None = None) -> Bundle:
        """This bundle for one more reader (a thread, a worker process, a Ray task): the same files and job, its own
        `issues` (for the caller to merge in order) and `budget` (default: this bundle's). A view never removes the
        temp dir of an unpacked tarball; it pickles without it."""
        other = copy.copy(self)
        other.issues = []
        other.budget = budget if budget is not None else self.budget
        return other

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state.pop("_finalizer", None)
        state["_tmpdir"] = None  # the opener's to remove, not a copy's
        return state

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Bundle(job_id={self.job.job_id!r}, source={str(self.source)!r})"

    def path(self, rel: str) -> Path | None:
        """The file `rel` (relative to the bundle root) names, or None when it, or a link on the way, leads out of
        the bundle. Every reader goes through this rule (the listings too): telemetry and cited paths are untrusted."""
        return inside(self._real_root, rel)

    def new_budget(self) -> ReadBudget:
        """A fresh per-bundle budget for one pass over the logs."""
        return ReadBudget(self.limits)

    # --- what is here --------------------------------------------------------------------------------

    def _files(self, part: str, links_out: bool = False) -> list[Path]:
        """The files under `part/`, without hidden ones; a linked folder is not entered. A symlink leading out of
        the bundle is skipped and noted, or with `links_out` listed, for its reader to refuse and name (a stack or
        probe file that cannot be read leaves its rank or node unknown, where a missing one counts as absent)."""
        base = self.root / part
        if self.path(part) is None:
            self._link_out(part)
            return []
        if not base.is_dir():
            return []
        out, todo = [], [base]
        while todo:
            folder = todo.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError as exc:
                self.issues.append(ReadIssue(file=self._rel(folder), kind="truncated",
                                             problem=f"folder not readable ({exc.strerror or exc}), skipped"))
                continue
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                p = Path(entry.path)
                if entry.is_symlink():
                    target = self.path(self._rel(p))
                    if target is None and links_out:
                        out.append(p)
                    elif target is None:
                        self._link_out(self._rel(p))
                    elif target.is_file():
                        out.append(p)
                elif entry.is_dir(follow_symlinks=False):
                    todo.append(p)
                elif entry.is_file(follow_symlinks=False):
                    out.append(p)
        return sorted(out)

    def _link_out(self, rel: str) -> None:
        target = os.path.realpath(self.root / rel)
        self.issues.append(ReadIssue(file=rel, kind="link",
                                     problem=f"a symlink out of the bundle (to {target}), not followed"))

    def _rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()

    def _host_of(self, p: Path, part: str) -> str | None:
        rel = p.relative_to(self.root / part).parts
        return rel[0] if len(rel) > 1 else None

    @cached_property
    def log_files(self) -> list[LogFile]:
        out, other = [], []
        for p in self._files("logs"):
            if not p.name.endswith(_LOG_SUFFIXES) and p.name not in _LOG_NAMES:
                other.append(self._rel(p))
                continue
            rank = rank_from_name(_strip_suffixes(p.name))
            if rank is None and p.name in _LOG_NAMES:
                rank = rank_from_name(p.parent.name)  # Open MPI's 'rank.9/stdout'
            host = self._host_of(p, "logs") or (self.job.host_of(rank) if rank is not None else None)
            out.append(LogFile(self._rel(p), host, rank))
        if other:
            self.issues.append(ReadIssue(file=other[0], kind="truncated", count=len(other), problem=(
                f"{len(other)} file(s) under logs/ not read ({', '.join(other[:3])}{', ...' if len(other) > 3 else ''})"
                ": a log's name ends in .log, .txt, .out, .err, .jsonl, .ndjson, .stdout or .stderr, or is stdout or "
                "stderr (gzip or zstd packed too)")))
        return out

    @cached_property
    def flow_files(self) -> list[str]:
        return [self._rel(p) for p in self._files("flows") if p.name.endswith(_FLOW_SUFFIXES)]

    @cached_property
    def stack_files(self) -> list[PartFile]:
        out = []
        for p in self._files("stacks", links_out=True):
            if not p.name.endswith((".txt", ".json", ".txt.gz", ".json.gz", ".txt.zst", ".json.zst")):
                continue
            stem = _strip_suffixes(p.name)
            rank = rank_from_name(stem)
            host = self._host_of(p, "stacks") or (self.job.host_of(rank) if rank is not None else None)
            out.append(PartFile(self._rel(p), host, stem, rank))
        return out

    @cached_property
    def probe_files(self) -> list[PartFile]:
        return [PartFile(self._rel(p), self._host_of(p, "probes"), _strip_suffixes(p.name))
                for p in self._files("probes", links_out=True)]

    def has(self, part: Part) -> bool:
        return bool({"logs": self.log_files, "flows": self.flow_files,
                     "stacks": self.stack_files, "probes": self.probe_files}[part])

    @property
    def missing(self) -> list[Part]:
        """The parts this bundle does not have; tools report them plainly and the diagnosis goes on."""
        return [p for p in PARTS if not self.has(p)]

    @property
    def year(self) -> int | None:
        """The year for log timestamps that print none (glog, syslog)."""
        when = self.job.started_at or self.job.ended_at
        return when.year if when else None

    # --- reading -------------------------------------------------------------------------------------

    def iter_log_lines(self, log_file: LogFile, budget: ReadBudget | None = None) -> Iterator[LogLine]:
        local = None
        if log_file.rank is None and log_file.host is not None:
            local = dict(enumerate(self.job.host_to_ranks.get(log_file.host, [])))
        return iter_log_lines(self.root, log_file, self.issues, local, budget or self.new_budget())

    def iter_all_log_lines(self) -> Iterator[LogLine]:
        budget = self.new_budget()
        for lf in self.log_files:
            yield from self.iter_log_lines(lf, budget)

    def iter_raw_lines(self, rel: str, budget: ReadBudget | None = None,
                       issues: list[ReadIssue] | None = None) -> Iterator[tuple[int, str]]:
        """(line number, text) of any file in the bundle (a run of blank lines gives its first); none for a path
        that leaves the bundle or a file that is not there."""
        path = self.path(rel)
        if path is None or not path.is_file():
            return iter(())
        return iter_raw_lines(path, rel, self.issues if issues is None else issues, budget or self.new_budget())

    def iter_flow_batches(self, batch_rows: int = 1 << 20) -> Iterator[pyarrow.RecordBatch]:  # noqa: F821
        for rel in self.flow_files:
            yield from iter_flow_batches(self.root / rel, rel, self.issues, batch_rows)

    def read_text(self, rel: str, limit: int = 64 << 20) -> str:
        """A stack or probe file (or any small file) as text, decoded with replacement."""
        path = self.path(rel)
        if path is None:
            raise BundleError(rel, "path leaves the bundle")
        return read_text(path, rel, self.issues, min(limit, self.limits.file_bytes), self.budget)

    def lines_around(self, rel: str, line: int, context: int = 3) -> list[tuple[int, str]]:
        """The lines `line - context .. line + context` of a file (1-based), for showing evidence in context;
        none for a path that leaves the bundle or a file that is not there."""
        out: list[tuple[int, str]] = []
        lo, hi = line - context, line + context
        last = 0
        for n, text in self.iter_raw_lines(rel, issues=[]):
            out.extend((k, "") for k in range(max(last + 1, lo), min(n, hi + 1)))  # a run of blank lines
            last = n
            if n > hi:
                break
            if n >= lo:
                out.append((n, text))
        return out

    @cached_property
    def truth(self) -> Truth | None:
        """`truth.json` of an eval case. For the eval and tests only; analyzers never read it."""
        p = self.path("truth.json")
        if p is None or not p.is_file():
            return None
        try:
            return Truth.model_validate_json(p.read_bytes())
        except ValueError as exc:
            raise BundleError("truth.json", f"not a valid truth.json: {exc}") from exc


def unpack_tarball(source: Path, limits: ReadLimits) -> tuple[Path, list[ReadIssue]]:
    """A bundle (or raw-log) tarball unpacked into a new temporary folder, with what was skipped; BundleError when it
    cannot be unpacked (the folder is removed then)."""
    tmpdir = Path(tempfile.mkdtemp(prefix="diagagent-bundle-"))
    issues: list[ReadIssue] = []
    try:
        _extract(source, tmpdir, limits, issues)
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        shutil.rmtree(tmpdir, ignore_errors=True)
        raise BundleError(str(source), f"cannot unpack the bundle tarball: {exc}") from exc
    return tmpdir, issues


def _find_root(tmpdir: Path) -> Path:
    """The unpacked bundle's root: the folder holding job.yaml (the tarball's top, or its single folder)."""
    if (tmpdir / "job.yaml").is_file():
        return tmpdir
    for cand in sorted(tmpdir.rglob("job.y*ml")):
        if len(cand.relative_to(tmpdir).parts) <= 3:
            return cand.parent
    return tmpdir


def inside(real_root: Path, rel: str) -> Path | None:
    """`rel` under the (resolved) bundle root with every link followed, or None when that leaves the root."""
    path = (real_root / rel).resolve()
    return path if path.is_relative_to(real_root) else None


def _load_job(root: Path, source: Path, limits: ReadLimits, issues: list[ReadIssue]) -> Job:
    """job.yaml (or job.yml) of an unpacked bundle; its notes (sizes that disagree) become issues."""
    real_root = root.resolve()
    for name in ("job.yaml", "job.yml"):
        if not (root / name).is_file() and not (root / name).is_symlink():
            continue
        path = inside(real_root, name)
        if path is None:
            raise BundleError(str(source / name), f"a symlink out of the bundle (to {os.path.realpath(root / name)})"
                                                  "; job.yaml must be a file inside it")
        if not path.is_file():
            continue
        job = Job.load(path, display_name=str(source / name), limits=limits)
        issues.extend(ReadIssue(file=name, line=line, kind="job", problem=note) for line, note in job.load_notes)
        inferred = (job.model_extra or {}).get("inferred")  # a bundle built from raw logs says what it inferred
        if isinstance(inferred, list):
            issues[:0] = [ReadIssue(file=name, kind="inferred", problem=str(n)[:500]) for n in inferred[:40]]
        return job
    raise BundleError(str(source / "job.yaml"), "missing: every bundle needs a job.yaml")


def _extract(source: Path, dest: Path, limits: ReadLimits, issues: list[ReadIssue]) -> None:
    """Unpack a bundle tarball member by member (one streaming pass), within limits.tar_bytes and
    limits.tar_members; what does not fit is skipped and noted, except a job.yaml, and unsafe members (links
    out, absolute paths, devices) are skipped and named."""
    total, members, skipped, skipped_bytes, refused = 0, 0, 0, 0, []
    over: str | None = None
    have_job = False
    with tarfile.open(source, "r:*") as tar:
        for member in tar:
            tar.members.clear()  # tarfile keeps every header it has read; a million-member bomb would stay in memory
            if members >= limits.tar_members:
                over = f"limits.tar_members ({limits.tar_members:,} members)"
                break
            members += 1
            is_job = Path(member.name).name in ("job.yaml", "job.yml") and member.size <= limits.job_yaml_bytes
            if member.isfile() and total + member.size > limits.tar_bytes and not is_job:
                over = f"limits.tar_bytes ({limits.tar_bytes:,} bytes)"
                skipped, skipped_bytes = skipped + 1, skipped_bytes + member.size
                if skipped_bytes > limits.tar_bytes and have_job:
                    break  # twice the cap gone through: do not decompress the rest only to skip it
                continue
            try:
                tar.extract(member, dest, filter="data")
            except (tarfile.FilterError, KeyError) as exc:
                refused.append(f"{member.name} ({exc})")
                continue
            total += member.size if member.isfile() else 0
            have_job = have_job or is_job
    if over is not None:
        issues.append(ReadIssue(file=source.name, kind="budget",
                                problem=f"tarball over {over}: {members - skipped:,} members ({total:,} bytes) "
                                        f"extracted, {skipped:,} skipped ({skipped_bytes:,} bytes), and any after"))
    if refused:
        issues.append(ReadIssue(file=source.name, kind="link", count=len(refused),
                                problem=f"unsafe tarball member(s) skipped: {'; '.join(refused[:5])}"))
