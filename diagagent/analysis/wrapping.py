"""Lines a terminal or a paste cut at a fixed width, joined back into the record the program printed.
The join keeps the record's first line number and leaves the lines it took in blank, so line numbers stay the file's."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

# Written for a screen copy cut at 75 columns and padded with spaces (dev:graphgpt-44: "[E ProcessGroupNCCL.cpp:915]
# [Rank 1] NCCL watchdog thread terminated with " / "exception: [Rank 1] Watchdog caught collective operation
# timeout: WorkNCCL(" / "SeqNum=778778, ...") and rich's exception text cut at 71 (dev:starcoder-77: "AssertionError:
# Check batch related parameters. train_batch_size is not" / "equal to micro_batch_per_gpu * ...").
MIN_WIDTH, MAX_WIDTH = 40, 300  # terminals and consoles: rich defaults to 80 columns; wider than 300 is no screen
MIN_FULL_LINES, MIN_JOINS = 3, 2  # how many lines must fill the width, and go on in a next line, to call it wrapped
MAX_CARRY = 64  # lines that fill the width at a block's end, read with the next block (a record longer is cut there)
_BORDERS = "│┃║|╭╮╰╯─━"  # a box drawn at the width (rich's traceback panel) is not text cut by it
# a line that starts a record of its own, whatever the line before it: a traceback, a bracketed or dated header, a
# log level, a frame, an exception
_RECORD_START = re.compile(
    r"\s*(?:Traceback|\[|\d{2,4}[-/:.]|(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\b|File \"|"
    r"[A-Za-z_][\w.]*(?:Error|Exception|Warning)\b)")
_DIGITS = re.compile(rb"\d+")


def width_of(raw: bytes) -> int:
    return len(raw) if raw.isascii() else len(raw.decode("utf-8", errors="replace"))


def fills(raw: bytes, width: int) -> bool:
    """The line reaches the width with text (a space at the last column is text the cut fell on; padding is not)."""
    return len(raw) >= width and width_of(raw) == width and width_of(raw.rstrip()) >= width - 1


def _shape(raw: bytes) -> bytes:
    return _DIGITS.sub(b"0", raw[:12])[:6]


def _goes_on(line: bytes, nxt: bytes) -> bool:
    """`nxt` continues `line`, which fills the width: it is not blank, starts no record of its own, and is not the
    next row of a table whose rows all fill the width (the same start, digits aside)."""
    if not nxt.strip():
        return False
    end, start = line.rstrip()[-3:].decode("utf-8", errors="replace"), nxt.lstrip()[:3].decode("utf-8", errors="replace")
    if end[-1:] in _BORDERS or start[:1] in _BORDERS:
        return False
    return not _RECORD_START.match(nxt.decode("utf-8", errors="replace")) and _shape(line) != _shape(nxt)


class Wrapping(NamedTuple):
    """How a file's lines were cut: at which width, and what to put back between the parts."""

    width: int
    sep: bytes  # b"": a terminal cut mid-word; b" ": a console wrapped at a space and dropped it


def wrapping_of(lines: list[bytes]) -> Wrapping | None:
    """How these lines were cut, or None: at the longest line's width, when several lines fill it and at least two
    of them go on in the next line (a file that was not cut has lines of every length, some longer). A terminal
    cuts wherever the width falls, so some cut line ends in a space; a console that wraps words (rich) never does."""
    if max(map(len, lines), default=0) > 4 * MAX_WIDTH:  # a line too long for any screen, even in 4-byte characters
        return None
    width = max((width_of(raw) for raw in lines), default=0)
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        return None
    return wrapping_at(width, [i for i, raw in enumerate(lines[:-1]) if fills(raw, width)], lines.__getitem__)


def wrapping_at(width: int, full: list[int], line: Callable[[int], bytes]) -> Wrapping | None:
    """wrapping_of, once the widest line's width and the lines that fill it (not the last line) are known."""
    if len(full) < MIN_FULL_LINES:
        return None
    joins = sum(_goes_on(line(i), line(i + 1)) for i in full)
    if joins < MIN_JOINS:
        return None
    return Wrapping(width, b"" if any(line(i).endswith(b" ") for i in full) else b" ")


def unwrap(lines: list[bytes], wrapping: Wrapping) -> dict[int, int]:
    """Join, in place, each line that fills the width with the lines that go on from it; the lines taken in become
    blank. {index of a joined record: index of its last line}."""
    width = wrapping.width
    spans: dict[int, int] = {}
    i = 0
    while i < len(lines) - 1:
        j = i
        while j < len(lines) - 1 and fills(lines[j], width) and _goes_on(lines[j], lines[j + 1]):
            j += 1
        if j > i:
            lines[i] = wrapping.sep.join(lines[i:j + 1]).rstrip()
            lines[i + 1:j + 1] = [b""] * (j - i)
            spans[i] = j
        i = j + 1
    return spans


def carry_from(lines: list[bytes], wrapping: Wrapping) -> int:
    """Where the lines that fill the width at the end of a block begin: they may go on in the next block."""
    i = len(lines)
    while i > 0 and len(lines) - i < MAX_CARRY and fills(lines[i - 1], wrapping.width):
        i -= 1
    return i
