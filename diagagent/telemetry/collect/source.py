"""Job sources behind "job 42" for the apps: a live Slurm or Kubernetes, collected on demand under the state dir.

Same three methods as `JobStore` (list, path_of, get) plus `open(ref)`; an unknown or ambiguous id lists candidates.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from diagagent.telemetry.bundle import Bundle
from diagagent.telemetry.collect.k8s import K8sCollector, job_status
from diagagent.telemetry.collect.runner import CollectError, Runner
from diagagent.telemetry.collect.slurm import JOB_ID, SlurmCollector, parse_scontrol
from diagagent.telemetry.collect.writer import safe_name
from diagagent.telemetry.limits import ReadLimits
from diagagent.telemetry.store import JobRef, JobSource, UnknownJob

FINAL = ("failed", "succeeded")

class AmbiguousJob(UnknownJob):
    """A name several jobs carry: never a silent pick."""

    def __init__(self, query: str, candidates: list[str]) -> None:
        LookupError.__init__(self, f"{query!r} names {len(candidates)} jobs: {', '.join(candidates[:20])}; "
                                   "give one of these ids")
        self.query = query
        self.known = candidates

class CollectingSource:
    """Jobs the cluster knows; `path_of` collects one into `<root>/<id>/` (again while it runs, once when done)."""

    kind = "?"
    empty = "The cluster lists no jobs."

    def __init__(self, root: Path, limits: ReadLimits | None = None) -> None:
        self.root = Path(root).expanduser()
        self.limits = limits

    def _listing(self) -> list[JobRef]:
        raise NotImplementedError

    def _collect(self, job_id: str, dest: Path) -> None:
        raise NotImplementedError

    def list(self) -> list[JobRef]:
        try:
            return self._listing()
        except CollectError:
            return []

    def _dest(self, job_id: str) -> Path:
        return self.root / safe_name(job_id.replace("/", "__"))

    def resolve(self, query: str) -> str:
        """The job id a user's word names: an id, or a name only one job carries."""
        q = query.strip().removeprefix("job-").removeprefix("job ")
        refs = self.list()
        if any(r.job_id == q for r in refs):
            return q
        named = [r.job_id for r in refs if r.name and r.name.lower() == query.strip().lower()]
        if len(named) > 1:
            raise AmbiguousJob(query, named)
        if named:
            return named[0]
        if self._looks_like_id(q):
            return q  # the listing may not show it (an old job sacct still knows): let the collector say
        raise UnknownJob(query, [r.job_id for r in refs], self.empty)

    def _looks_like_id(self, q: str) -> bool:
        return False

    def path_of(self, query: str) -> Path:
        job_id = self.resolve(query)
        dest = self._dest(job_id)
        if _final(dest):
            return dest
        try:
            self._collect(job_id, dest)
        except CollectError:
            known = [r.job_id for r in self.list()]
            if job_id not in known:
                raise UnknownJob(query, known, self.empty) from None
            raise
        return dest

    def get(self, query: str) -> Bundle:
        return Bundle.open(self.path_of(query), self.limits)

    def open(self, ref: JobRef) -> Bundle:
        return self.get(ref.job_id)

class SlurmSource(CollectingSource):
    kind = "slurm"
    empty = "Slurm lists no jobs (`scontrol show job` is empty)."

    def __init__(self, root: Path, limits: ReadLimits | None = None, runner: Runner | None = None,
                 quiet_for_s: float = 600.0) -> None:
        super().__init__(root, limits)
        self.runner = runner or Runner()
        self.quiet_for_s = quiet_for_s

    def _listing(self) -> list[JobRef]:
        records = parse_scontrol(self.runner.text(["scontrol", "show", "job", "-o"]))
        refs = []
        for r in records:
            job_id = r.get("JobId", "") + (f"_{r['ArrayTaskId']}" if r.get("ArrayTaskId") else "")
            state = r.get("JobState", "").lower()
            refs.append(JobRef(job_id=job_id, name=r.get("JobName"), status=state,
                               path=str(self._dest(job_id))))
        return refs

    def _looks_like_id(self, q: str) -> bool:
        return JOB_ID.match(q) is not None

    def _collect(self, job_id: str, dest: Path) -> None:
        SlurmCollector(self.runner, self.quiet_for_s).collect(job_id, dest)

class K8sSource(CollectingSource):
    kind = "k8s"
    empty = "The namespace has no PyTorchJob, JobSet or Job."

    def __init__(self, root: Path, limits: ReadLimits | None = None, runner: Runner | None = None,
                 namespace: str = "default", context: str | None = None) -> None:
        super().__init__(root, limits)
        self.runner = runner or Runner()
        self.namespace = namespace
        self.context = context

    def _collector(self) -> K8sCollector:
        return K8sCollector(self.runner, self.context)

    def _listing(self) -> list[JobRef]:
        found = self._collector().list_jobs(self.namespace)
        names = [str((obj.get("metadata") or {}).get("name")) for _, obj in found]
        refs = []
        for kind, obj in found:
            name = str((obj.get("metadata") or {}).get("name"))
            job_id = f"{kind}/{self.namespace}/{name}" if names.count(name) > 1 else name
            refs.append(JobRef(job_id=job_id, name=name, status=job_status(obj), path=str(self._dest(job_id))))
        return refs

    def resolve(self, query: str) -> str:
        q = query.strip()
        if re.fullmatch(r"(?:[a-z]+/)?[a-z0-9][-a-z0-9.]*/[a-z0-9][-a-z0-9.]*", q):
            return q  # NAMESPACE/NAME or KIND/NAMESPACE/NAME: as given
        return super().resolve(query)

    def _collect(self, job_id: str, dest: Path) -> None:
        self._collector().collect(job_id, dest, self.namespace)

def _final(dest: Path) -> bool:
    """A bundle collected when its job had already ended: it will not change, so it is not collected again."""
    try:
        head = (dest / "job.yaml").read_text(encoding="utf-8", errors="replace")[:1 << 16]
    except OSError:
        return False
    m = re.search(r"^status: (\w+)", head, re.MULTILINE)
    return m is not None and m.group(1) in FINAL and "collected_from:" in head

def job_source(kind: str, jobs_dir: Path, state_dir: Path, limits: ReadLimits | None = None, *,
               namespace: str = "default", context: str | None = None,
               quiet_for_s: float = 600.0) -> JobSource:
    """`dir` (the jobs folder, as before), `slurm` or `k8s` (collected on demand under <state_dir>/collected/)."""
    from diagagent.telemetry.store import JobStore

    makers: dict[str, Callable[[], JobSource]] = {
        "dir": lambda: JobStore(jobs_dir, limits),
        "slurm": lambda: SlurmSource(state_dir / "collected" / "slurm", limits, quiet_for_s=quiet_for_s),
        "k8s": lambda: K8sSource(state_dir / "collected" / "k8s", limits, namespace=namespace, context=context),
    }
    if kind not in makers:
        raise ValueError(f"unknown job source {kind!r}; one of {', '.join(makers)}")
    return makers[kind]()

__all__ = ["AmbiguousJob", "CollectingSource", "K8sSource", "SlurmSource", "job_source"]
