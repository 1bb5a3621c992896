"""Where the analyzers' file work runs: in this process, a pool of processes sized to the machine, or Ray tasks.
The chunks (consecutive files) depend on the bundle only and merge in order, so where they ran never changes answers.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, Self, TypeVar

J = TypeVar("J")
R = TypeVar("R")

CHUNKS_AT_LEAST = 8  # a bundle past an analyzer's threshold is cut into at least this many chunks


def cpu_count() -> int:
    """The cores this process may use (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


class Workers:
    """Runs `fn` over chunks: in this process when there is one worker (or one chunk), else in a spawned process
    pool started on first need and shared by every analyzer of one diagnosis (thread-safe). Close it when done.
    `min_bytes`, when set, replaces every analyzer's own threshold for cutting its files into chunks."""

    def __init__(self, count: int | None = None, min_bytes: int | None = None) -> None:
        self.count = max(1, count if count is not None else cpu_count())
        self.min_bytes = min_bytes  # when set: the bytes past which any analyzer uses the processes (else its own)
        self._pool: Any = None
        self._lock = threading.Lock()

    @property
    def where(self) -> str:
        return f"{self.count} local process(es)" if self.count > 1 else "this process"

    def chunks(self, work: int, items: int, threshold: int, chunk_work: int) -> int:
        """How many chunks to cut `items` files holding `work` bytes into: one below `threshold` (starting processes
        would cost more than they save), else about one per `chunk_work` bytes. It depends on the bundle only, not
        on where the chunks run, so a pool, Ray and one process give the same answer."""
        threshold = threshold if self.min_bytes is None else self.min_bytes
        if work < threshold or items <= 1:
            return 1
        return min(items, max(CHUNKS_AT_LEAST, -(-work // max(chunk_work, 1))))

    def map(self, fn: Callable[[J], R], jobs: Sequence[J]) -> list[R]:
        """`fn` of each job, in the jobs' order."""
        if len(jobs) <= 1 or self.count <= 1:
            return [fn(j) for j in jobs]
        return list(self._executor().map(fn, jobs))

    @property
    def local(self) -> bool:
        """Processes on this machine (not Ray)."""
        return True

    def submit(self, fn: Callable[..., R], *args: Any) -> Future[R]:
        """`fn(*args)` in one of the processes (in this one, done before it returns, when there is one worker)."""
        if self.count <= 1:
            done: Future[R] = Future()
            try:
                done.set_result(fn(*args))
            except BaseException as exc:  # noqa: BLE001 - the caller gets it from the future
                done.set_exception(exc)
            return done
        return self._executor().submit(fn, *args)

    def _executor(self) -> Any:
        with self._lock:
            if self._pool is None:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                self._pool = ProcessPoolExecutor(max_workers=self.count,
                                                 mp_context=multiprocessing.get_context("spawn"))
            return self._pool

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RayWorkers(Workers):
    """Runs each chunk as a Ray task (any size of bundle: the point is to spread it over a cluster). `address`:
    a cluster's (`ray://head:10001`, `auto`, `head:6379`), or `local` to start a Ray instance on this machine. A Ray
    already initialized in this process is used as it is. Every Ray node must read the bundle at the same path
    (a shared filesystem) and have diagagent installed."""

    def __init__(self, address: str, min_bytes: int | None = None) -> None:
        super().__init__(1, min_bytes)
        self.address = address
        self.tasks = 0  # Ray tasks run so far
        self._remote: dict[Callable[..., Any], Any] = {}
        self._ray: Any = None

    @property
    def where(self) -> str:
        return f"Ray ({self.address}, {self.count} CPU(s))"

    def _connect(self) -> Any:
        with self._lock:
            if self._ray is None:
                try:
                    import ray
                except ImportError as exc:
                    raise RuntimeError("Ray is not installed: pip install 'diagagent[ray]' (needed for "
                                       f"DIAGAGENT_RAY_ADDRESS={self.address})") from exc
                if not ray.is_initialized():
                    ray.init(address=self.address,
                             include_dashboard=False, log_to_driver=False, configure_logging=False)
                self.count = max(1, int(ray.cluster_resources().get("CPU", 1)))
                self._ray = ray
            return self._ray

    def map(self, fn: Callable[[J], R], jobs: Sequence[J]) -> list[R]:
        ray = self._connect()
        with self._lock:
            remote = self._remote.get(fn)
            if remote is None:
                remote = self._remote[fn] = ray.remote(num_cpus=1, max_retries=0)(fn)
        refs = [remote.remote(j) for j in jobs]
        self.tasks += len(refs)
        return list(ray.get(refs))

    @property
    def local(self) -> bool:
        return False

    def close(self) -> None:
        """Leaves Ray running (a cluster outlives a diagnosis; a local instance ends with this process)."""


def workers_for(count: int | None = None, ray_address: str | None = None) -> Workers:
    """Ray tasks when an address is given, else a local pool of `count` processes (None: one per core)."""
    return RayWorkers(ray_address) if ray_address else Workers(count)
