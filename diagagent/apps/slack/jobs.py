"""Which job a Slack message is about: "why did job 42 die?", "/diagagent job-42", "what happened to llama3-70b-…".

Ids and names are matched against the jobs folder; names loosely, so a typo or a dropped version digit still finds it.
"""

from __future__ import annotations

import difflib
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from diagagent.telemetry import Bundle
from diagagent.telemetry.store import JobRef, JobSource

# <@U123>, <#C123|general>, <!here>, <https://x|label>: Slack's markup in message text
SLACK_MARKUP = re.compile(r"<([^<>|]*)(?:\|([^<>]*))?>")
# "job 42", "job-42", "job #42", "job id: 42", "job llama3-70b-pretrain"
EXPLICIT_JOB = re.compile(r"\bjob\b(?:\s*id\b)?[\s#:=-]*([A-Za-z0-9][\w.\-]*[A-Za-z0-9]|[A-Za-z0-9])", re.IGNORECASE)
HASH_NUMBER = re.compile(r"#(\d+)\b")
WORD = re.compile(r"[A-Za-z0-9][\w.\-]*[A-Za-z0-9]|[A-Za-z0-9]")
NAME_CUTOFF = 0.8  # difflib ratio for a loose name match ("llama-70b-pretrain" ~ "llama3-70b-pretrain": 0.97)


def plain_text(slack_text: str) -> str:
    """Message text without mentions and with links as their labels, Slack's &amp; &lt; &gt; decoded."""
    def replace(m: re.Match[str]) -> str:
        target, label = m.group(1), m.group(2)
        if target.startswith(("@", "!")):
            return " "
        if target.startswith("#"):
            return f"#{label or target[1:]}"
        return label or target

    text = SLACK_MARKUP.sub(replace, slack_text)
    return " ".join(text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").split())


@dataclass(frozen=True)
class JobLookup:
    """What a message names: `job` when it matched a known job, `asked` when something looked like a job id.

    `explicit`: the match followed the word "job" (or was #N), so it may switch a thread to another job.
    """

    job: JobRef | None
    asked: str | None
    explicit: bool = False

    @property
    def unknown(self) -> bool:
        """The message named a job that the jobs folder does not have."""
        return self.job is None and self.asked is not None


def _folder_name(ref: JobRef) -> str:
    name = Path(ref.path).name.lower()
    for suffix in (".tar.gz", ".tgz"):
        name = name.removesuffix(suffix)
    return name


def _looks_like_name(word: str) -> bool:
    return len(word) >= 5 and ("-" in word or "_" in word)


def resolve(word: str, refs: list[JobRef]) -> JobRef | None:
    """The known job a word names: its id (with or without `job-`), its name, its folder, or a close name."""
    lowered = word.strip().lower()
    bare = lowered.removeprefix("job-")
    for ref in refs:
        if ref.job_id.lower() in (lowered, bare) or (ref.name or "").lower() == lowered \
                or _folder_name(ref) in (lowered, f"job-{bare}"):
            return ref
    if not _looks_like_name(lowered):
        return None
    named = {ref.name.lower(): ref for ref in refs if ref.name}
    close = difflib.get_close_matches(lowered, list(named), n=1, cutoff=NAME_CUTOFF)
    return named[close[0]] if close else None


def _explicit_ids(text: str) -> list[str]:
    found = [(m.start(), m.group(1)) for m in EXPLICIT_JOB.finditer(text)]
    found += [(m.start(), m.group(1)) for m in HASH_NUMBER.finditer(text)]
    return [word for _, word in sorted(found)]


def _identifier_like(word: str) -> bool:
    return any(c.isdigit() for c in word) or _looks_like_name(word)


def find_job(slack_text: str, refs: list[JobRef]) -> JobLookup:
    """The job a message is about: what follows "job" first, then any word that is a known id or name.

    When nothing matches, `asked` is the id-like word the user probably meant (after "job", else the first word
    with a digit), so the reply can say which job was not found.
    """
    text = plain_text(slack_text)
    explicit = _explicit_ids(text)
    words = WORD.findall(text)
    for i, word in enumerate([*explicit, *words]):
        ref = resolve(word, refs)
        if ref is not None:
            return JobLookup(job=ref, asked=word, explicit=i < len(explicit))
    asked = next((w for w in explicit if _identifier_like(w)), None)
    if asked is None:
        asked = next((w for w in words if any(c.isdigit() for c in w)), None)
    return JobLookup(job=None, asked=asked)


class JobDirectory:
    """The job source's list of jobs (the jobs folder, or what Slurm / Kubernetes knows), read again at most every `max_age_s` (or at once for an unknown job)."""

    def __init__(self, store: JobSource, max_age_s: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.max_age_s = max_age_s
        self._clock = clock
        self._refs: list[JobRef] = []
        self._read_at: float | None = None
        self._lock = threading.Lock()

    def refs(self, *, fresh: bool = False) -> list[JobRef]:
        with self._lock:
            now = self._clock()
            if fresh or self._read_at is None or now - self._read_at > self.max_age_s:
                self._refs = self.store.list()
                self._read_at = now
            return list(self._refs)

    def lookup(self, slack_text: str) -> JobLookup:
        """`find_job` over the known jobs; an unknown id re-reads the folder once, for a bundle that just arrived."""
        found = find_job(slack_text, self.refs())
        if found.unknown:
            found = find_job(slack_text, self.refs(fresh=True))
        return found

    def open(self, ref: JobRef) -> Bundle:
        """The job's bundle: read from the jobs folder, or collected now from Slurm / Kubernetes."""
        return self.store.open(ref)


__all__ = ["JobDirectory", "JobLookup", "find_job", "plain_text", "resolve"]
