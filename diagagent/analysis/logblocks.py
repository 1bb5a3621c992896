"""Block-at-once helpers for the log scan's fast path: every line's shape from one vectorized pass (digits made 0,
lines hashed by pyarrow), progress numbers read by column, and the progress checks run over whole columns.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from diagagent.analysis.templates import SHAPE_TABLE
from diagagent.analysis.wrapping import MAX_WIDTH, MIN_WIDTH, Wrapping, fills, width_of, wrapping_at
from diagagent.telemetry.readers import LineBlock

WINDOW = 10  # the progress checks' window (logscan._WINDOW)


class BlockShapes:
    """Each line's shape (SHAPE_TABLE: digits 1-9 made 0) as an index into the block's distinct shapes, and the lines
    holding a `0x` literal (their shape folds hex letters too: the per-line reader computes it)."""

    def __init__(self, block: LineBlock) -> None:
        shaped = (block.body + b"\n").translate(SHAPE_TABLE)  # a newline so that every value below ends in one
        offsets = np.append(block.starts, len(shaped)).astype(np.int64)
        lines = pa.Array.from_buffers(pa.large_binary(), len(block),
                                      [None, pa.py_buffer(offsets), pa.py_buffer(shaped)])
        encoded = pc.dictionary_encode(lines)
        self.index = encoded.indices.to_numpy(zero_copy_only=False)  # line -> distinct shape
        self.values: list[bytes] = [v[:-1] for v in encoded.dictionary.to_pylist()]
        # a line holding `0x` has a shape holding `0x` (digits shape to 0, x stays): only the lines of such shapes
        # are looked at, one by one (a pass over the block's bytes would cost as much as the shapes did)
        hexy = [j for j, value in enumerate(self.values) if b"0x" in value]
        self.hex_rows = np.empty(0, np.int64)
        if hexy:
            rows = np.flatnonzero(np.isin(self.index, hexy))
            self.hex_rows = rows[[b"0x" in line(block, i) for i in rows.tolist()]].astype(np.int64)

    def first_rows(self) -> np.ndarray:
        """The block's first line of each distinct shape. dictionary_encode numbers the shapes in the order they
        first occur, so shape j first occurs where the running maximum of the lines' shapes reaches j (checked: else
        found by sorting)."""
        if not len(self.index):
            return np.empty(0, np.int64)
        peak = np.maximum.accumulate(self.index)
        rises = np.flatnonzero(np.concatenate(([True], peak[1:] != peak[:-1])))
        if len(rises) == len(self.values) and int(peak[-1]) == len(self.values) - 1:
            return rises  # (one rise per shape, each by one: shape j's first line is the j-th rise)
        return np.unique(self.index, return_index=True)[1]


def column(block: LineBlock, rows: np.ndarray, start: int, end: int) -> np.ndarray:
    """The number at bytes start:end of each of these lines (lines of one shape: at the same offsets), as float()
    reads it: by column where its text is a plain decimal, else one by one."""
    first = block.starts[rows] + start
    parsed = _decimal_column(block, first, end - start)
    if parsed is not None:
        return parsed
    fields = map(block.body.__getitem__, map(slice, first.tolist(), (first + (end - start)).tolist()))
    return np.fromiter(map(float, fields), np.float64, len(rows))


_DECIMAL = re.compile(rb" *([+-]?)(\d{1,15})(?:\.(\d*))?(?:[eE]([+-]?)(\d{1,3}))? *")
_POW10 = np.array([float(10 ** k) for k in range(23)])  # exact in binary64


def _decimal_column(block: LineBlock, first: np.ndarray, width: int) -> np.ndarray | None:
    """The numbers of `width` bytes from `first` on, when they are plain decimals written alike (the same bytes but
    digits): a whole-number mantissa of at most 15 digits (exact in binary64) times or over a power of ten of at most
    22 (exact too), one rounding, the very double float() reads. None otherwise."""
    template = block.body[int(first[0]):int(first[0]) + width]
    m = _DECIMAL.fullmatch(template)
    if m is None or len(m.group(2)) + len(m.group(3) or b"") > 15:
        return None
    text = np.frombuffer(block.body, np.uint8)[first[:, None] + np.arange(width)]
    digits = np.frombuffer(template.translate(SHAPE_TABLE), np.uint8) == 48
    if not ((text[:, ~digits] == np.frombuffer(template, np.uint8)[~digits]).all()
            and (text[:, digits] - np.uint8(48) < np.uint8(10)).all()):
        return None
    values = (text - np.uint8(48)).astype(np.int64)

    def number(a: int, b: int) -> np.ndarray:  # the digits at template[a:b] as whole numbers
        return values[:, a:b] @ (10 ** np.arange(b - a - 1, -1, -1, dtype=np.int64))

    whole, frac = number(*m.span(2)), m.span(3) if m.group(3) is not None else (0, 0)
    mantissa = whole * 10 ** (frac[1] - frac[0]) + number(*frac)
    exponent = np.full(len(first), -(frac[1] - frac[0]), np.int64)
    if m.group(5) is not None:
        exponent += number(*m.span(5)) * (-1 if m.group(4) == b"-" else 1)
    if (np.abs(exponent) > 22).any():
        return None
    scale = _POW10[np.abs(exponent)]
    out = np.where(exponent >= 0, mantissa * scale, mantissa / scale)
    return -out if m.group(1) == b"-" else out


def no_jump(history: list[float], values: np.ndarray, factor: float) -> bool:
    """No value is more than `factor` times the least of the (up to WINDOW) values before it, once 3 came before:
    the progress checks' jump test (logscan._jump) cannot fire on any of them."""
    if not len(values):
        return True
    seq = np.concatenate([np.full(WINDOW, np.inf), np.asarray(history, np.float64), values])
    before = np.lib.stride_tricks.sliding_window_view(seq, WINDOW)[len(history):len(history) + len(values)]
    mins = before.min(axis=1)
    seen = np.arange(len(history), len(history) + len(values))
    return not bool(((seen >= 3) & (values > factor * mins)).any())


def no_slowdown(recent: list[float], steps: np.ndarray, ratio: float, least: int) -> bool:
    """No step is past `ratio` times the mean of the (up to WINDOW) steps before it, once `least` came before: the
    slowdown check (logscan._slowdown) cannot start a candidate on any of them. Flags with a margin over rounding, so
    a borderline step goes to the exact per-line check."""
    if not len(steps):
        return True
    seq = np.concatenate([np.zeros(WINDOW), np.asarray(recent, np.float64), steps])
    before = np.lib.stride_tricks.sliding_window_view(seq, WINDOW)[len(recent):len(recent) + len(steps)]
    count = np.minimum(np.arange(len(recent), len(recent) + len(steps)), WINDOW)
    threshold = ratio * before.sum(axis=1) / np.maximum(count, 1)
    return not bool(((count >= least) & (steps > threshold - 1e-9 * np.abs(threshold))).any())


def block_wrapping(block: LineBlock) -> Wrapping | None:
    """wrapping_of(block.lines()), with each line's width bounded by column (no more than its bytes, no fewer than
    the bytes that start a character: each starts one, valid or not) and measured one by one only where the bounds
    leave it open: the widest line and the lines that may fill its width."""
    lengths = block.ends - block.starts
    if not len(lengths) or int(lengths.max()) > 4 * MAX_WIDTH:
        return None
    low = lengths
    if not block.body.isascii():
        raw = np.frombuffer(block.body, np.uint8)
        inner = np.flatnonzero(raw >= 0x80)
        inner = inner[(raw[inner] & np.uint8(0xC0)) == np.uint8(0x80)]  # continuation bytes
        low = lengths - (np.searchsorted(inner, block.ends) - np.searchsorted(inner, block.starts))
    floor = int(low.max())
    width = max([floor, *(width_of(line(block, i)) for i in np.flatnonzero((lengths > floor) & (low != lengths))
                          .tolist())])
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        return None
    maybe = np.flatnonzero((lengths[:-1] >= width) & (low[:-1] <= width)).tolist()
    return wrapping_at(width, [i for i in maybe if fills(line(block, i), width)], lambda i: line(block, i))


def line(block: LineBlock, i: int) -> bytes:
    return block.body[int(block.starts[i]):int(block.ends[i])]
