"""Guards every analyzer shares: its wall-clock `Budget` (checked between files, nothing is killed), and the rank
numbers of job.yaml that are too large to be ranks (left out, and named once).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from diagagent.telemetry import Job, ReadIssue

MAX_RANK = 1 << 31  # a rank number past this is no rank: analyzers leave it out


@dataclass(slots=True)
class Budget:
    """Seconds an analyzer may spend; `None` is no limit. The analyzer asks `spent()` before each file after the
    first and, when it is, calls `stop()` with what it had reached and how much it leaves unread."""

    seconds: float | None = None
    started: float = field(default_factory=time.monotonic)
    stopped_at: str | None = None  # the file (or batch) the analyzer had reached when the budget ran out
    unread: int = 0  # files (or batches) left unread
    unit: str = "file(s)"

    def spent(self) -> bool:
        return self.seconds is not None and time.monotonic() - self.started > self.seconds

    def deadline(self) -> float | None:
        """The budget's end as epoch seconds, for worker processes (which cannot share a monotonic clock)."""
        if self.seconds is None:
            return None
        return time.time() + self.seconds - (time.monotonic() - self.started)

    def stop(self, at: str, unread: int, unit: str = "file(s)") -> None:
        if self.stopped_at is None:
            self.stopped_at, self.unit = at, unit
        self.unread += unread

    @property
    def hit(self) -> bool:
        return self.stopped_at is not None


def odd_ranks(job: Job) -> tuple[set[int], ReadIssue | None]:
    """job.yaml's rank numbers outside 0..MAX_RANK-1, and the issue that names them (None when there are none)."""
    odd = {r for r in job.rank_to_host if not 0 <= r < MAX_RANK}
    if not odd:
        return odd, None
    return odd, ReadIssue(file="job.yaml", count=len(odd), problem=(
        f"rank number(s) outside 0..{MAX_RANK - 1} (the first: {str(min(odd))[:30]}), left out of the analysis"))


__all__ = ["MAX_RANK", "Budget", "odd_ranks"]
