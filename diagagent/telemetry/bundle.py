"""`Bundle`: one incident's telemetry (a directory or a .tar.gz), read as BUNDLE.md defines it.

Only `job.yaml` is required. Every other part may be missing: `Bundle.missing` says which, and readers stream.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import weakref
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Literal

from diagagent.telemetry.errors import BundleError, ReadIssue
from diagagent.telemetry.job import Job
from diagagent.telemetry.readers import (
    LogFile,
    LogLine,
    PartFile,
    iter_flow_batches,
    iter_log_lines,
    rank_from_name,
    read_text,
)
from diagagent.telemetry.truth import Truth

Part = Literal["logs", "flows", "stacks", "probes"]
PARTS: tuple[Part, ...] = ("logs", "flows", "stacks", "probes")

_LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".log.gz", ".txt.gz", ".out.gz", ".err.gz")
_FLOW_SUFFIXES = (".csv", ".csv.gz", ".parquet")


def _strip_suffixes(name: str) -> str:
    for suffix in (".gz", ".txt", ".json", ".log", ".out", ".err"):
        name = name.removesuffix(suffix)
    return name


class Bundle:
    """An opened incident bundle. Use as a context manager (a tarball is unpacked to a temp dir until closed)."""

    def __init__(self, root: Path, source: Path, job: Job, tmpdir: Path | None = None) -> None:
        self.root = root
        self.source = source
        self.job = job
        self.issues: list[ReadIssue] = []
        self._tmpdir = tmpdir
        if tmpdir is not None:
            self._finalizer = weakref.finalize(self, shutil.rmtree, tmpdir, True)

    # --- opening ---------------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path) -> Bundle:
        """Open a bundle directory, or a `.tar.gz` / `.tgz` of one. Raises BundleError if job.yaml is unusable."""
        source = Path(path).expanduser()
        if not source.exists():
            raise BundleError(str(source), "no such bundle (expected a directory or a .tar.gz holding job.yaml)")
        tmpdir = None
        if source.is_dir():
            root = source
        elif source.name.endswith((".tar.gz", ".tgz", ".tar")):
            tmpdir = Path(tempfile.mkdtemp(prefix="diagagent-bundle-"))
            try:
                with tarfile.open(source, "r:*") as tar:
                    tar.extractall(tmpdir, filter="data")
            except (tarfile.TarError, EOFError, OSError) as exc:
                shutil.rmtree(tmpdir, ignore_errors=True)
                raise BundleError(str(source), f"cannot unpack the bundle tarball: {exc}") from exc
            root = _find_root(tmpdir)
        else:
            raise BundleError(str(source), "expected a bundle directory or a .tar.gz / .tgz of one")
        job_path = root / "job.yaml"
        if not job_path.is_file():
            alt = root / "job.yml"
            if not alt.is_file():
                if tmpdir is not None:
                    shutil.rmtree(tmpdir, ignore_errors=True)
                raise BundleError(str(source / "job.yaml"), "missing: every bundle needs a job.yaml")
            job_path = alt
        try:
            job = Job.load(job_path, display_name=str(source / job_path.name))
        except BundleError:
            if tmpdir is not None:
                shutil.rmtree(tmpdir, ignore_errors=True)
            raise
        return cls(root, source, job, tmpdir)

    def close(self) -> None:
        if self._tmpdir is not None:
            self._finalizer()

    def __enter__(self) -> Bundle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Bundle(job_id={self.job.job_id!r}, source={str(self.source)!r})"

    # --- what is here --------------------------------------------------------------------------------

    def _files(self, part: str) -> list[Path]:
        base = self.root / part
        if not base.is_dir():
            return []
        return sorted(p for p in base.rglob("*") if p.is_file() and not p.name.startswith("."))

    def _rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()

    def _host_of(self, p: Path, part: str) -> str | None:
        rel = p.relative_to(self.root / part).parts
        return rel[0] if len(rel) > 1 else None

    @cached_property
    def log_files(self) -> list[LogFile]:
        out = []
        for p in self._files("logs"):
            if not p.name.endswith(_LOG_SUFFIXES):
                continue
            rank = rank_from_name(_strip_suffixes(p.name))
            host = self._host_of(p, "logs") or (self.job.host_of(rank) if rank is not None else None)
            out.append(LogFile(self._rel(p), host, rank))
        return out

    @cached_property
    def flow_files(self) -> list[str]:
        return [self._rel(p) for p in self._files("flows") if p.name.endswith(_FLOW_SUFFIXES)]

    @cached_property
    def stack_files(self) -> list[PartFile]:
        out = []
        for p in self._files("stacks"):
            if not p.name.endswith((".txt", ".json", ".txt.gz", ".json.gz")):
                continue
            stem = _strip_suffixes(p.name)
            rank = rank_from_name(stem)
            host = self._host_of(p, "stacks") or (self.job.host_of(rank) if rank is not None else None)
            out.append(PartFile(self._rel(p), host, stem, rank))
        return out

    @cached_property
    def probe_files(self) -> list[PartFile]:
        return [PartFile(self._rel(p), self._host_of(p, "probes"), _strip_suffixes(p.name))
                for p in self._files("probes")]

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

    def iter_log_lines(self, log_file: LogFile) -> Iterator[LogLine]:
        local = None
        if log_file.rank is None and log_file.host is not None:
            local = dict(enumerate(self.job.host_to_ranks.get(log_file.host, [])))
        return iter_log_lines(self.root, log_file, self.issues, local)

    def iter_all_log_lines(self) -> Iterator[LogLine]:
        for lf in self.log_files:
            yield from self.iter_log_lines(lf)

    def iter_flow_batches(self, batch_rows: int = 1 << 20) -> Iterator[pyarrow.RecordBatch]:  # noqa: F821
        for rel in self.flow_files:
            yield from iter_flow_batches(self.root / rel, rel, self.issues, batch_rows)

    def _path_inside(self, rel: str) -> Path | None:
        """The file `rel` names, or None when it leaves the bundle (a cited path is telemetry, not trusted)."""
        root = self.root.resolve()
        path = (root / rel).resolve()
        return path if path.is_relative_to(root) else None

    def read_text(self, rel: str, limit: int = 64 << 20) -> str:
        """A stack or probe file (or any small file) as text, decoded with replacement."""
        path = self._path_inside(rel)
        if path is None:
            raise BundleError(rel, "path leaves the bundle")
        return read_text(path, rel, self.issues, limit)

    def lines_around(self, rel: str, line: int, context: int = 3) -> list[tuple[int, str]]:
        """The lines `line - context .. line + context` of a file (1-based), for showing evidence in context;
        none for a path that leaves the bundle or a file that is not there."""
        from diagagent.telemetry.readers import iter_raw_lines

        path = self._path_inside(rel)
        if path is None or not path.is_file():
            return []
        out = []
        for n, text in iter_raw_lines(path, rel, []):
            if n > line + context:
                break
            if n >= line - context:
                out.append((n, text))
        return out

    @cached_property
    def truth(self) -> Truth | None:
        """`truth.json` of an eval case. For the eval and tests only; analyzers never read it."""
        p = self.root / "truth.json"
        if not p.is_file():
            return None
        try:
            return Truth.model_validate_json(p.read_bytes())
        except ValueError as exc:
            raise BundleError(self._rel(p), f"not a valid truth.json: {exc}") from exc


def _find_root(tmpdir: Path) -> Path:
    """The unpacked bundle's root: the folder holding job.yaml (the tarball's top, or its single folder)."""
    if (tmpdir / "job.yaml").is_file():
        return tmpdir
    for cand in sorted(tmpdir.rglob("job.y*ml")):
        if len(cand.relative_to(tmpdir).parts) <= 3:
            return cand.parent
    return tmpdir
