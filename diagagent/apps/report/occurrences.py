"""More occurrences of the failure-indicating log events, for the timeline: each event's first line on every node.

The logs analyzer keeps one occurrence per event (on the root node when it has one); this reads the logs again,
but only when they are small enough for that to be cheap (REREAD_BUDGET_BYTES).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from diagagent.telemetry import parse_timestamp

if TYPE_CHECKING:
    from diagagent.analysis.events import LogEvent
    from diagagent.telemetry import Bundle, LogFile

REREAD_BUDGET_BYTES = 32 << 20  # logs larger than this on disk are not read again
MAX_EVENTS = 40  # the strongest multi-node events looked for
NEARBY_LINES = 32  # a line without a time of its own takes the time of one this close before it
MIN_ANCHOR = 6  # a template whose longest fixed word is shorter than this is too vague to look for cheaply
MAX_MATCH_CHARS = 4096


@dataclass(frozen=True)
class Sighting:
    """The first line of one event on one node."""

    event: int  # index into the events given
    host: str
    file: str
    line: int
    ts: float


@dataclass(frozen=True)
class _Matcher:
    event: int
    anchor: str  # a fixed word of the template: the cheap test every line gets
    pattern: re.Pattern[str]  # the whole template: the test a line with the anchor gets


def template_matcher(event: int, template: str) -> _Matcher | None:
    """A matcher for a drain3 template (`<*>` for variable parts), or None when it has no distinctive word."""
    words = [w for w in template.replace("<*>", " ").split() if len(w) >= MIN_ANCHOR]
    if not words:
        return None
    pieces = [r"\s+".join(re.escape(w) for w in part.split()) for part in template.split("<*>")]
    return _Matcher(event, max(words, key=len), re.compile(r".*?".join(p for p in pieces if p)))


def log_bytes(bundle: Bundle) -> int:
    """The logs' size on disk."""
    return sum((bundle.root / lf.file).stat().st_size for lf in bundle.log_files)


def sightings(bundle: Bundle, events: list[LogEvent]) -> tuple[list[Sighting], str]:
    """(first timed line of each multi-node event on each node, a note on what was not read). Nothing is read
    when the logs are over REREAD_BUDGET_BYTES; only the MAX_EVENTS first events seen on several nodes count."""
    wanted = [(i, e) for i, e in enumerate(events) if e.host_count > 1][:MAX_EVENTS]
    matchers = [m for i, e in wanted if (m := template_matcher(i, e.template)) is not None]
    if not matchers:
        return [], ""
    size = log_bytes(bundle)
    if size > REREAD_BUDGET_BYTES:
        mb = REREAD_BUDGET_BYTES >> 20
        return (
            [],
            f"the logs ({size >> 20} MB) are over {mb} MB, so only each event's first occurrence is drawn",
        )
    year = bundle.year
    first: dict[tuple[int, str], Sighting] = {}
    for lf in bundle.log_files:
        for s in _file_sightings(bundle, lf, matchers, year):
            key = (s.event, s.host)
            if key not in first or s.ts < first[key].ts:
                first[key] = s
    return sorted(first.values(), key=lambda s: s.ts), ""


def _file_sightings(
    bundle: Bundle, lf: LogFile, matchers: list[_Matcher], year: int | None
) -> list[Sighting]:
    """The first timed line of each matcher's event in one log file."""
    todo = list(matchers)
    recent: deque[str] = deque(maxlen=NEARBY_LINES)
    out: list[Sighting] = []
    for ll in bundle.iter_log_lines(lf):
        text = ll.text
        hits = [m for m in todo if m.anchor in text and m.pattern.search(text[:MAX_MATCH_CHARS])]
        if hits:
            ts = _time_of(text, recent, year)
            if ts is not None:
                out.extend(Sighting(m.event, ll.host or "", ll.file, ll.line, ts) for m in hits)
                todo = [m for m in todo if m not in hits]
                if not todo:
                    break
        recent.append(text)
    return out


def _time_of(text: str, recent: deque[str], year: int | None) -> float | None:
    """The line's own time, or the time of the nearest line before it that prints one."""
    ts = parse_timestamp(text, year)
    if ts is not None:
        return ts
    for before in reversed(recent):
        ts = parse_timestamp(before, year)
        if ts is not None:
            return ts
    return None
