"""Template mining for training logs on drain3, with a shape cache in front of it, and the normal-event pool.

`LineShaper` maps a raw line to a masked message (a line already seen in the same shape skips all parsing);
`TemplateMiner` groups messages into templates with drain3; `NormalPool` keeps the templates of successful jobs.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from drain3 import TemplateMiner as Drain3Miner
from drain3.drain import Drain
from drain3.template_miner_config import TemplateMinerConfig
from pydantic import BaseModel, Field, PrivateAttr

from diagagent.analysis.logparse import (
    LEVEL_RANK,
    WILDCARD,
    content_level,
    level_after_bar,
    line_kind,
    marker_of,
    mask,
    split_header,
)
from diagagent.telemetry import parse_timestamp

# a line's shape: its bytes with every digit made 0 (lines that differ only in numbers share a shape)
SHAPE_TABLE = bytes.maketrans(b"123456789", b"000000000")
# lines with 0x literals (pointers, ids) also fold the hex letters, so each C++ frame is not a shape of its own
HEX_SHAPE_TABLE = bytes.maketrans(b"123456789abcdefABCDEF", b"0" * 21)


def shape_of(raw: bytes) -> bytes:
    """A line's shape: its bytes with every digit (and, in a line with a 0x literal, every hex letter) made 0."""
    return raw.translate(HEX_SHAPE_TABLE if b"0x" in raw else SHAPE_TABLE)
MAX_MESSAGE_CHARS = 4096  # a message is cut here before masking (the line itself is kept whole for citing)

# message ids reserved for lines that are not events
BLANK, CORRUPT, OVERFLOW = 0, 1, 2
# kind flags of a message (low 3 bits: the framework marker)
MARKERS = ("", "iteration", "ckpt_start", "ckpt_end", "eval_start", "eval_end", "train_start", "shutdown",
           "ckpt_load", "straggler_report")
K_ITERATION = 1
K_MARKER_MASK = 15
K_EXCEPTION, K_FRAME, K_TRACEBACK, K_SKIP, K_CARET, K_HEADER, K_ERROR_HEAD = 16, 32, 64, 128, 256, 512, 1024
K_ERROR_WORDS = 2048  # the message's own words say error (whatever its header's level)
K_INDENTED = 4096  # the message is indented (after any rank prefix): under a traceback, or a detail line
K_DUMP = 8192  # a thread's header in a stack dump (faulthandler, py-spy): its frames follow, innermost first
K_WARNING_WORDS = 16384  # the message's own words say warning (an INFO line's 'OVERFLOW! ... Skipping step')
_KIND_BITS = {"exception": K_EXCEPTION, "frame": K_FRAME, "caret": K_CARET, "traceback": K_TRACEBACK, "dump": K_DUMP,
              "other": 0}


def _is_corrupt(text: str) -> bool:
    """Binary junk: mostly replacement or control characters."""
    bad = sum(1 for c in text if c == "\ufffd" or (c < " " and c != "\t"))
    return bad * 4 > len(text)


class LineShaper:
    """Raw line -> message id. The fast path is one `bytes.translate` and one dict lookup per line; only a line of a
    new shape is decoded, stripped of its header, classified and masked. Memory is bounded: the shape cache is
    cleared when full, and messages past `max_messages` share one overflow id.

    `shapes` maps a shape to its code: the message id shifted left by one, with the low bit set when lines of that
    shape print a time (so a reader parses times only where there are some)."""

    def __init__(self, names: re.Pattern[str] | None = None, *, headers: bool = True, year: int | None = None,
                 max_shapes: int = 200_000, max_messages: int = 100_000) -> None:
        self.names = names
        self.headers = headers
        self.year = year
        self.max_shapes = max_shapes
        self.max_messages = max_messages
        self.shapes: dict[bytes, int] = {}
        self.messages: list[str] = ["", "<corrupt line>", "<more distinct messages than the miner keeps>"]
        self.levels: list[int] = [-1, -1, -1]  # LEVEL_RANK of the message, -1 when nothing says
        self.kinds: list[int] = [K_SKIP, K_SKIP, 0]
        self._ids: dict[str, int] = {}
        self.shape_misses = 0

    def message_id(self, raw: bytes) -> int:
        """The message id of one raw line (no trailing newline)."""
        code = self.shapes.get(shape_of(raw))
        return (code if code is not None else self.add_shape(raw)) >> 1

    def add_shape(self, raw: bytes) -> int:
        """The slow path: decode, split the header, classify and mask a line of a shape not seen yet; its code."""
        self.shape_misses += 1
        if len(self.shapes) >= self.max_shapes:
            self.shapes.clear()
        key = shape_of(raw)
        text = raw[: MAX_MESSAGE_CHARS * 2].decode("utf-8", errors="replace")
        if "\r" in text:  # a progress bar redrawn with \r: its last segment is what the reader saw
            parts = [p for p in text.split("\r") if p.strip()]
            text = parts[-1] if parts else ""
        timed = False
        if not text.strip() or text.strip(" │\t\r") == "":  # (an empty line of a rich.traceback panel too)
            mid = BLANK
        elif "\ufffd" in text and _is_corrupt(text):
            mid = CORRUPT
        else:
            mid = self._message(text)
            timed = parse_timestamp(text, self.year) is not None
        code = self.shapes[key] = (mid << 1) | timed
        return code

    def _message(self, text: str) -> int:
        structured = indented = False
        if self.headers:
            parsed = split_header(text)
            message, header_level, structured = parsed.message[:MAX_MESSAGE_CHARS], parsed.level, parsed.structured
            indented = parsed.indented
            if not message:  # a line that is all header ("[rank0]:" between a dump's threads) says nothing
                return BLANK
        else:
            message, header_level = text.strip()[:MAX_MESSAGE_CHARS], None
        masked = mask(message, self.names)
        if not masked:
            return BLANK
        mid = self._ids.get(masked)
        # NCCL reports its errors as WARN; its INFO lines, retries and fallbacks among them ('NCCL INFO Could not enable
        # P2P between dev 4 and dev 3', dev:gpt-neox-1147), are information whatever their words
        word_level = None if header_level == "info" and message.startswith("NCCL INFO") else content_level(message)
        kind = line_kind(message)
        level = _level(header_level, word_level, kind == "exception")
        if mid is None:
            if len(self.messages) >= self.max_messages:
                return OVERFLOW
            mid = len(self.messages)
            self._ids[masked] = mid
            self.messages.append(masked)
            # a frame naming save_checkpoint is no marker: it is printed after the fact, not when saving began
            marker = marker_of(message) if kind in ("other", "traceback") else None
            after_bar = level_after_bar(message) if marker == "iteration" else None
            if after_bar in ("error", "fatal"):  # an error printed onto a progress bar's line is the error, at its own
                marker, structured = None, True  # level, not progress, and no other line's message going on
                level = max(level, LEVEL_RANK[after_bar])
            self.levels.append(level)
            if marker not in (None, "iteration", "straggler_report") and level >= LEVEL_RANK["error"]:
                # an error that names a stage is the failure, not a stage's mark: Orbax's "E0318 ... sharding.py:426]
                # The available devices are different from the devices used to save the checkpoint.  Please restore
                # checkpoint ..." (dev:demonstration-information-1)
                marker = None
            error_head = structured and level >= LEVEL_RANK["error"]
            error_words = word_level in ("error", "fatal")
            warning_words = word_level == "warning"
            self.kinds.append((MARKERS.index(marker) if marker else 0) | _KIND_BITS[kind]
                              | (K_HEADER if structured else 0) | (K_ERROR_HEAD if error_head else 0)
                              | (K_ERROR_WORDS if error_words else 0) | (K_WARNING_WORDS if warning_words else 0)
                              | (K_INDENTED if indented else 0))
        elif level > self.levels[mid]:
            self.levels[mid] = level
        return mid


def _level(header: str | None, words: str | None, exception: bool) -> int:
    """A line's level: its header's when it has one (a warning that mentions a hang is still a warning; an exception
    line is an error whatever its header); else what its words say; -1 when neither says."""
    level = LEVEL_RANK[header] if header else (LEVEL_RANK[words] if words else -1)
    if header == "info" and words in ("error", "fatal"):  # an error a program logs at INFO (OpenRLHF's refused
        # reward server, dev:lmm-r1-30) is a warning: seen, never above a line that says error in its header
        level = LEVEL_RANK["warning"]
    return max(level, LEVEL_RANK["error"]) if exception else level


def canonical(template: str) -> str:
    """A drain template in the form log-parsing oracles use: adjacent wildcards joined, spaces made one."""
    t = " ".join(template.split())
    while True:
        prev = t
        t = t.replace("<*><*>", WILDCARD).replace("<*>.<*>", WILDCARD)
        if t == prev:
            return t


def merge_tokens(a: str, b: str) -> str:
    """Two different tokens at one place of a template: what they share before and after a delimiter, around a
    wildcard (`rhost=<*>`, `"<*>`, `<*>(uid=<*>)`); `<*>` when they share nothing."""
    n, m = shared_ends(a, b)
    return a[:n] + WILDCARD + (a[len(a) - m:] if m else "")


def shared_ends(a: str, b: str) -> tuple[int, int]:
    """How many characters two tokens share at their start and at their end, each cut back to a delimiter."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    while n and a[n - 1].isalnum():
        n -= 1
    m = 0
    while m < min(len(a), len(b)) - n and a[-1 - m] == b[-1 - m]:
        m += 1
    while m and a[len(a) - m].isalnum():
        m -= 1
    return n, m


def generalize_siblings(templates: Iterable[str], min_siblings: int = 5) -> dict[str, str]:
    """Templates that differ only in one plain word, when at least `min_siblings` of them do, hold a variable there
    (user names): each -> the template with a wildcard at that place. Fewer siblings stay apart (GET / POST)."""
    groups: dict[tuple, set[str]] = {}
    for template in set(templates):
        tokens = template.split()
        words = sum(1 for t in tokens if WILDCARD not in t)
        if words < 3:  # a message that is (almost) only the word is that word's event ("normal", "boot (command <*>)")
            continue
        for i, token in enumerate(tokens):
            if _WORD.match(token):
                groups.setdefault((i, tuple(tokens[:i]), tuple(tokens[i + 1:])), set()).add(template)
    out: dict[str, str] = {}
    for (i, before, after), members in groups.items():
        if len(members) >= min_siblings:
            merged = " ".join([*before, WILDCARD, *after])
            for template in members:
                out.setdefault(template, merged)
    return out


def template_id(template: str) -> str:
    """A stable id for a template text (the same in every job and every run)."""
    return "T" + hashlib.blake2b(template.encode(), digest_size=5).hexdigest()


_WORD = re.compile(r"""^["'(\[]?[A-Za-z]{2,}[.,:;)\]"']?$""")


class WordGuardDrain(Drain):
    """drain3's Drain that never makes one word another (`VM Paused` / `VM Resumed`, `GET` / `POST` stay apart):
    a place where two templates hold different plain words is no match. Variables are masked before mining, and
    the words that are variables (user names) are rarer in training logs than the words that name different
    events. A keyword (an all-capitals word: `HTTPS`, `SCREEN_ON`, `WARN`) names a kind, never a value, so a place
    where a template holds one is no match for a masked variable either (`HTTPS` / `SOCKS5`), nor for another
    keyword inside one token's name (`action.TIME_TICK` / `action.SCREEN_ON`; a keyword after `=`, `:` or a bracket is
    a field's value: `OpType=SEND`)."""

    def get_seq_distance(self, seq1: Sequence[str], seq2: Sequence[str], include_params: bool) -> tuple[float, int]:
        for a, b in zip(seq1, seq2):
            if a != b and a != self.param_str and (_WORD.match(a) and (_WORD.match(b) or b == WILDCARD and _is_keyword(a))
                                                   or _differ_in_keyword(a, b) or _one_is_an_arrow(a, b)):
                return -1.0, 0
        return super().get_seq_distance(seq1, seq2, include_params)


_KEYWORD = re.compile(r"[A-Z][A-Z_]*[A-Z]")
_ARROW = re.compile(r"->|=>|<-")


def _one_is_an_arrow(a: str, b: str) -> bool:
    """An arrow against a word: an arrow is the line's structure, never a variable's value (NCCL's return trace 'NCCL INFO
    bootstrap.cc:270 -> 2' is no 'NCCL INFO Using network IBext', dev:nccl-1000)."""
    return bool(_ARROW.fullmatch(a) and _WORD.match(b) or _ARROW.fullmatch(b) and _WORD.match(a))


def _is_keyword(token: str) -> bool:
    """A plain all-capitals word (GET, HTTPS, ERROR, TCP): a keyword that names a kind, never a variable's value."""
    return _KEYWORD.fullmatch(token.strip("\"'()[].,:;")) is not None


def _differ_in_keyword(a: str, b: str) -> bool:
    """Two tokens whose differing middles (what is left past what they share up to a delimiter, as in merge_tokens)
    are both keywords: `action.TIME_TICK` / `action.SCREEN_ON`, `SCREEN_ON` / `SCREEN_OFF`."""
    if not (any(c.isupper() for c in a) and any(c.isupper() for c in b)):
        return False
    n, m = shared_ends(a, b)
    if n and a[n - 1] not in "._":  # a value after `=`, `:` or in brackets is a variable's (OpType=SEND)
        return False
    core_a, core_b = a[n:len(a) - m], b[n:len(b) - m]
    return _KEYWORD.fullmatch(core_a) is not None and _KEYWORD.fullmatch(core_b) is not None


class TemplateMiner:
    """drain3 over masked messages. Each distinct message goes through drain3 once; the templates are read when
    mining ends, in canonical form, and clusters whose canonical templates are equal are one template."""

    def __init__(self, *, sim_th: float = 0.4, depth: int = 4, max_clusters: int = 50_000,
                 max_children: int = 100) -> None:
        config = TemplateMinerConfig()
        config.drain_sim_th = sim_th
        config.drain_depth = depth
        config.drain_max_clusters = max_clusters
        config.drain_max_children = max_children
        config.masking_instructions = []
        config.profiling_enabled = False
        self._miner = Drain3Miner(None, config)  # no persistence handler: drain3 would save on every new cluster
        self._miner.drain = WordGuardDrain(depth=depth, sim_th=sim_th, max_children=max_children,
                                           max_clusters=max_clusters)
        self._cluster_of: dict[str, int] = {}
        self._tokens: dict[int, list[str]] = {}  # each cluster's template, token by token

    def add(self, message: str) -> int:
        """The drain3 cluster id of a masked message (adding it to drain3 if new). Where drain3 makes a token a
        wildcard, the cluster's own template keeps what the differing tokens share at their ends (`rhost=<*>`)."""
        cid = self._cluster_of.get(message)
        if cid is None:
            cluster, _ = self._miner.drain.add_log_message(message)
            cid = cluster.cluster_id
            self._cluster_of[message] = cid
            tokens = message.split()
            known = self._tokens.get(cid)
            if known is None or len(known) != len(tokens):
                self._tokens[cid] = tokens
            else:
                self._tokens[cid] = [a if a == b else merge_tokens(a, b) for a, b in zip(known, tokens)]
            if len(self._cluster_of) > 4 * self._miner.config.drain_max_clusters:
                self._cluster_of.clear()
        return cid

    def cluster_template(self, cid: int) -> str:
        return canonical(" ".join(self._tokens.get(cid, ())))

    def final_templates(self, cids: Iterable[int]) -> dict[int, str]:
        """Each cluster's template when mining is done, with word siblings generalized (see generalize_siblings)."""
        own = {cid: self.cluster_template(cid) for cid in cids}
        general = generalize_siblings(own.values())
        return {cid: general.get(t, t) for cid, t in own.items()}

    def template_of(self, message: str) -> str:
        return self.cluster_template(self.add(message))

    def mine(self, lines: Iterable[bytes], shaper: LineShaper | None = None) -> list[int]:
        """Template group of every line; see `mine_templates`."""
        return self.mine_templates(lines, shaper)[0]

    def mine_templates(self, lines: Iterable[bytes], shaper: LineShaper | None = None,
                       ) -> tuple[list[int], list[str]]:
        """Template group of every line (small ints, equal for lines of one template; -1 for lines that are not
        events: blank, corrupt, past the message bound) and each group's template. A line of a known shape costs a
        translate and a lookup."""
        shaper = shaper or LineShaper()
        shapes, table, hex_table = shaper.shapes, SHAPE_TABLE, HEX_SHAPE_TABLE
        cluster_of_message: list[int] = []
        out_ids: list[int] = []
        append = out_ids.append
        for raw in lines:
            code = shapes.get(raw.translate(hex_table if b"0x" in raw else table))  # shape_of, inlined
            if code is None:
                code = shaper.add_shape(raw)
            append(code >> 1)
        messages = shaper.messages
        for mid in range(len(cluster_of_message), len(messages)):
            cluster_of_message.append(self.add(messages[mid]) if mid > OVERFLOW else -1)
        group_of_template: dict[str, int] = {}
        group_of_cluster: dict[int, int] = {}
        final = self.final_templates({c for c in cluster_of_message if c >= 0})
        for cid, template in final.items():
            group_of_cluster[cid] = group_of_template.setdefault(template, len(group_of_template))
        group_of_message = [group_of_cluster.get(c, -1) for c in cluster_of_message]
        return [group_of_message[m] for m in out_ids], list(group_of_template)

    def templates(self) -> dict[int, str]:
        """Canonical template of every cluster."""
        return {cid: self.cluster_template(cid) for cid in self._tokens}


def grouping_accuracy(predicted: list, truth: list) -> float:
    """Loghub's grouping accuracy: the share of lines whose predicted group holds exactly the lines of their true
    group."""
    members: dict = {}
    for i, t in enumerate(truth):
        members.setdefault(t, []).append(i)
    sizes: dict = {}
    for p in predicted:
        sizes[p] = sizes.get(p, 0) + 1
    correct = 0
    for lines in members.values():
        group = predicted[lines[0]]
        if sizes[group] == len(lines) and all(predicted[i] == group for i in lines):
            correct += len(lines)
    return correct / len(truth) if truth else 1.0


# --- the normal-event pool ----------------------------------------------------------------------------------


class PoolJob(BaseModel):
    learned_at: str
    lines: int = 0
    templates: list[str] = Field(default_factory=list)  # template ids


class PoolTemplate(BaseModel):
    template: str
    level: str | None = None


class NormalPool(BaseModel):
    """Templates seen in successful jobs (L4's cross-job pattern). Lives in `<state_dir>/normal_pool/pool.json`;
    written whole (temp file + rename, under a lock), once per learned job, never per template."""

    version: int = 1
    jobs: dict[str, PoolJob] = Field(default_factory=dict)
    templates: dict[str, PoolTemplate] = Field(default_factory=dict)
    _index: tuple[dict[str, int], dict[int, list[tuple[tuple[str, ...], str]]]] | None = PrivateAttr(None)

    # --- learning --------------------------------------------------------------------------------------------

    def add_job(self, job_id: str, templates: dict[str, str | None], lines: int = 0) -> None:
        """Record one successful job's templates (text -> level); learning a job again replaces it."""
        ids = []
        for text, level in templates.items():
            tid = template_id(text)
            ids.append(tid)
            known = self.templates.get(tid)
            if known is None:
                self.templates[tid] = PoolTemplate(template=text, level=level)
        self.jobs[job_id] = PoolJob(learned_at=datetime.now(UTC).isoformat(timespec="seconds"),
                                    lines=lines, templates=sorted(ids))
        self._index = None

    def merged(self, other: NormalPool) -> NormalPool:
        out = self.model_copy(deep=True)
        for job_id, job in other.jobs.items():
            out.jobs[job_id] = job
        for tid, t in other.templates.items():
            out.templates.setdefault(tid, t)
        return out

    # --- asking ----------------------------------------------------------------------------------------------

    def _job_counts(self) -> dict[str, int]:
        index = self._index
        if index is None:
            counts: dict[str, int] = {}
            for job in self.jobs.values():
                for tid in job.templates:
                    counts[tid] = counts.get(tid, 0) + 1
            by_len: dict[int, list[tuple[tuple[str, ...], str]]] = {}
            for tid, t in self.templates.items():
                tokens = tuple(t.template.split())
                by_len.setdefault(len(tokens), []).append((tokens, tid))
            index = self._index = (counts, by_len)
        return index[0]

    def share(self, template: str) -> float:
        """The share of pool jobs whose logs hold this template (exactly, or a template that matches it where one
        of the two has a wildcard). 0.0 for an empty pool."""
        if not self.jobs:
            return 0.0
        counts = self._job_counts()
        exact = counts.get(template_id(template), 0)
        if exact:
            return exact / len(self.jobs)
        tokens = template.split()
        best = 0
        for cand, tid in (self._index[1] if self._index else {}).get(len(tokens), []):
            if _compatible(tokens, cand):
                best = max(best, counts.get(tid, 0))
        return best / len(self.jobs)

    # --- storage ---------------------------------------------------------------------------------------------

    @staticmethod
    def path_in(state_dir: Path) -> Path:
        return Path(state_dir) / "normal_pool" / "pool.json"

    @classmethod
    def load(cls, state_dir: Path) -> NormalPool:
        """The pool in a state dir (empty if there is none, or if the file is unreadable)."""
        path = cls.path_in(state_dir)
        try:
            return cls.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            return cls()

    def save(self, state_dir: Path) -> Path:
        """Write the pool atomically; concurrent writers are serialized by a lock file and merged."""
        path = self.path_in(state_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path.with_suffix(".lock")):
            on_disk = type(self).load(state_dir)
            merged = on_disk.merged(self) if on_disk.jobs else self
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".pool-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                f.write(merged.model_dump_json())
            os.replace(tmp, path)
        return path


def _compatible(a: list[str] | tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Two templates of one length that agree wherever neither has a wildcard, on at least half their tokens."""
    same = 0
    for x, y in zip(a, b):
        if x == y:
            same += x != WILDCARD
        elif x != WILDCARD and y != WILDCARD:
            return False
    return same * 2 >= len(a)


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    with open(lock_path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
