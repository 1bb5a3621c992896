"""Execution leases: which process runs an approved action, until when, and whether it can still finish.

Committed before a command runs; a lease whose process is gone or whose time is up leaves the outcome unknown.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import BaseModel


class Lease(BaseModel):
    """The process (`pid` on `host`, started at `start` by the kernel's clock) that holds an execution, and until when."""

    token: str
    host: str
    pid: int
    start: str = ""  # /proc/<pid>/stat starttime, so a reused pid is not mistaken for the holder
    until: datetime

    @classmethod
    def take(cls, seconds: float) -> Lease:
        pid = os.getpid()
        return cls(token=uuid.uuid4().hex, host=socket.gethostname(), pid=pid, start=process_start(pid) or "",
                   until=datetime.now(UTC) + timedelta(seconds=seconds))

    def lost(self, now: datetime | None = None) -> str | None:
        """Why the holder can no longer finish, or None while it may.

        On the holder's host its process is checked (alive: never lost, however long it takes); from another
        host only the lease's expiry can tell.
        """
        if self.host == socket.gethostname():
            return None if alive(self.pid, self.start) else f"its executor (pid {self.pid} on {self.host}) is gone"
        if (now or datetime.now(UTC)) > self.until:
            return f"its lease (pid {self.pid} on {self.host}) expired at {self.until:%Y-%m-%d %H:%M:%S} UTC"
        return None

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}, lease until {self.until:%Y-%m-%d %H:%M:%S} UTC"


def process_start(pid: int) -> str | None:
    """The process' start time from /proc (None if it is not running, is a zombie, or /proc cannot tell)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


def alive(pid: int, start: str) -> bool:
    """Whether the process `pid` (started at `start`, if known) still runs on this host."""
    now_start = process_start(pid)
    if now_start is not None:
        return not start or now_start == start
    if Path("/proc/self/stat").exists():  # /proc works here: the pid is gone, or a zombie
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


__all__ = ["Lease", "alive", "process_start"]
