"""`JobStore`: what a user types ("job 42", "llama3-70b-pretrain") -> that job's bundle under a jobs root.

A folder of bundles (`<jobs_dir>/<job_id>/`, `job-<id>/`, or tarballs); a live Slurm or Kubernetes plugs in behind
the same methods (`JobSource`, implemented in telemetry.collect.source).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from diagagent.telemetry.bundle import Bundle
from diagagent.telemetry.errors import BundleError
from diagagent.telemetry.job import Job
from diagagent.telemetry.limits import ReadLimits


class JobRef(BaseModel):
    job_id: str
    name: str | None
    status: str
    path: str


class UnknownJob(LookupError):
    def __init__(self, query: str, known: list[str], empty: str = "The jobs folder holds no bundles.") -> None:
        self.query = query
        self.known = known
        hint = f" Known jobs: {', '.join(known[:10])}." if known else f" {empty}"
        super().__init__(f"No job {query!r} found.{hint}")


class JobStore:
    def __init__(self, jobs_dir: Path, limits: ReadLimits | None = None) -> None:
        self.jobs_dir = Path(jobs_dir).expanduser()
        self.limits = limits

    def _candidates(self) -> list[Path]:
        if not self.jobs_dir.is_dir():
            return []
        return sorted(p for p in self.jobs_dir.iterdir()
                      if (p.is_dir() and ((p / "job.yaml").is_file() or (p / "job.yml").is_file()))
                      or p.name.endswith((".tar.gz", ".tgz")))

    def list(self) -> list[JobRef]:
        refs = []
        for p in self._candidates():
            try:
                if p.is_dir():
                    name = "job.yaml" if (p / "job.yaml").is_file() else "job.yml"
                    job = Job.load(p / name, str(p / name), self.limits)
                else:
                    with Bundle.open(p, self.limits) as b:
                        job = b.job
            except BundleError:
                continue
            refs.append(JobRef(job_id=job.job_id, name=job.name, status=job.status, path=str(p)))
        return refs

    def path_of(self, query: str) -> Path:
        """The bundle path for a job id (`42`, `job-42`) or job name; UnknownJob if none matches."""
        q = query.strip().removeprefix("job-").removeprefix("job ")
        for name in (q, f"job-{q}", f"{q}.tar.gz", f"job-{q}.tar.gz", f"{q}.tgz", f"job-{q}.tgz"):
            p = self.jobs_dir / name
            if p.exists():
                return p
        refs = self.list()
        for ref in refs:
            if ref.job_id == q or (ref.name and ref.name.lower() == query.strip().lower()):
                return Path(ref.path)
        raise UnknownJob(query, [r.job_id for r in refs])

    def get(self, query: str) -> Bundle:
        return Bundle.open(self.path_of(query), self.limits)

    def open(self, ref: JobRef) -> Bundle:
        return Bundle.open(ref.path, self.limits)


class JobSource(Protocol):
    """Where "job 42" is found: this jobs folder, or a live cluster (telemetry.collect.source) collected on demand."""

    def list(self) -> list[JobRef]: ...

    def path_of(self, query: str) -> Path: ...

    def get(self, query: str) -> Bundle: ...

    def open(self, ref: JobRef) -> Bundle: ...


def open_target(target: str, jobs_dir: Path, limits: ReadLimits | None = None,
                source: JobSource | None = None) -> Bundle:
    """A CLI/app argument that is either a bundle path or a job id/name in the jobs folder (or in `source`)."""
    p = Path(target).expanduser()
    if p.exists() or target.endswith((".tar.gz", ".tgz")) or ("/" in target and source is None):
        return Bundle.open(p, limits)
    return (source or JobStore(jobs_dir, limits)).get(target)
