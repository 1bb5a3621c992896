"""Per-thread Sessions for the Slack bot: a follow-up in a thread continues the conversation its diagnosis began.

Kept in memory and bounded (least recently used out first): a restart forgets threads, never the ledger's actions.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from diagagent.agent.session import Session
from diagagent.telemetry.store import JobRef

ThreadKey = tuple[str, str]  # (channel id, thread ts)
EventHandler = Callable[[dict[str, Any]], None]
DEFAULT_CAPACITY = 200


class EventRelay:
    """A Session's `on_event`: forwards to whichever handler the thread's current request installed."""

    def __init__(self) -> None:
        self.target: EventHandler | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        target = self.target
        if target is not None:
            target(event)


@dataclass
class ThreadSession:
    """One Slack thread's incident: the job it is about and the Session that keeps its conversation."""

    key: ThreadKey
    job: JobRef
    session: Session
    relay: EventRelay
    lock: threading.Lock = field(default_factory=threading.Lock)  # one request at a time per thread


class SessionStore:
    """Thread sessions by (channel, thread ts), the least recently used dropped beyond `capacity`.

    A dropped Session's bundle is left to its finalizer (a tarball's temp dir goes when nothing holds it), so a
    request still running on it is not cut short.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._threads: OrderedDict[ThreadKey, ThreadSession] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: ThreadKey) -> ThreadSession | None:
        with self._lock:
            thread = self._threads.get(key)
            if thread is not None:
                self._threads.move_to_end(key)
            return thread

    def put(self, thread: ThreadSession) -> None:
        with self._lock:
            self._threads[thread.key] = thread
            self._threads.move_to_end(thread.key)
            while len(self._threads) > self.capacity:
                self._threads.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._threads)


class SeenMessages:
    """Messages already handled: Slack retries a slow event, and an @mention arrives as two events."""

    def __init__(self, capacity: int = 2000) -> None:
        self.capacity = capacity
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._lock = threading.Lock()

    def first_time(self, channel: str, ts: str) -> bool:
        """True the first time a (channel, message ts) is offered, False after."""
        with self._lock:
            if (channel, ts) in self._seen:
                return False
            self._seen[(channel, ts)] = None
            while len(self._seen) > self.capacity:
                self._seen.popitem(last=False)
            return True


__all__ = ["EventRelay", "SeenMessages", "SessionStore", "ThreadKey", "ThreadSession"]
