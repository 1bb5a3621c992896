"""Block-at-once helpers for the log scan's fast path: every line's shape from one vectorized pass (digits made 0,
lines hashed by pyarrow), progress numbers read by column, and the progress checks run over whole columns.
"""

from __future__ import annotations

import re
from types import ModuleType

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from diagagent.analysis.templates import SHAPE_TABLE
from diagagent.analysis.wrapping import MAX_WIDTH, MIN_WIDTH, Wrapping, fills, width_of, wrapping_at
from diagagent.telemetry.readers import LineBlock

WINDOW = 10  # the progress checks' window (logscan._WINDOW)


class BlockShapes:
    """Each line's shape (SHAPE_TABLE: digits 1-9 made 0) as an index into the block's distinct shapes, numbered in
    the order they first occur, and the lines holding a `0x` literal (their shape folds hex letters too: the per-line
    reader computes it). By `native` (compiled_lines(): one pass in C) when given, else by numpy and pyarrow: the same
    numbers, shapes and rows either way (tests/test_lines_native.py)."""

    def __init__(self, block: LineBlock, native: ModuleType | None = None) -> None:
        self.firsts: np.ndarray | None = None  # each shape's first line, when the pass gave them
        if native is not None:
            self.index = np.empty(len(block), np.int32)  # (the int32 dictionary_encode gives)
            self.values, firsts, hex_rows = native.shapes(block.body, block.starts, block.ends, self.index)
            self.firsts = np.array(firsts, np.int64)
            self.hex_rows = np.array(hex_rows, np.int64)
            return
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
            of_hexy = np.zeros(len(self.values), bool)
            of_hexy[hexy] = True
            rows = np.flatnonzero(of_hexy[self.index])
            self.hex_rows = rows[[b"0x" in line(block, i) for i in rows.tolist()]].astype(np.int64)

    def first_rows(self) -> np.ndarray:
        """The block's first line of each distinct shape. dictionary_encode numbers the shapes in the order they
        first occur, so shape j first occurs where the running maximum of the lines' shapes reaches j (checked: else
        found by sorting)."""
        if self.firsts is not None:
            return self.firsts
        if not len(self.index):
            return np.empty(0, np.int64)
        peak = np.maximum.accumulate(self.index)
        rises = np.flatnonzero(np.concatenate(([True], peak[1:] != peak[:-1])))
        if len(rises) == len(self.values) and int(peak[-1]) == len(self.values) - 1:
            return rises  # (one rise per shape, each by one: shape j's first line is the j-th rise)
        return np.unique(self.index, return_index=True)[1]


_DECIMAL = re.compile(rb" *([+-]?)(\d{1,15})(?:\.(\d*))?(?:[eE]([+-]?)(\d{1,3}))? *")
_POW10 = np.array([float(10 ** k) for k in range(23)])  # exact in binary64


class ShapeColumns:
    """Reads fields (byte spans) of the lines of one shape by column, all at once. Lines of one shape hold the same
    bytes but for digits, at the same offsets, so one line's text says how every line writes each field. A field
    written as a plain decimal is a whole-number mantissa of at most 15 digits (exact in binary64: one product of the
    lines' digits with a fixed matrix of powers of ten) times or over a power of ten of at most 22 (exact too): one
    rounding, the very double float() reads. Any other field is read by float(), line by line."""

    def __init__(self, line: bytes, spans: list[tuple[int, int]]) -> None:
        self.spans = spans
        offsets: list[int] = []  # the lines' digits read, every field's together
        mantissa: list[list[tuple[int, int]]] = []  # per field: (digit, power of ten) of its whole-number mantissa
        power: list[list[tuple[int, int]]] = []  # per field: (digit, power of ten) of its written exponent
        plain_fields, exponents, negative = [], [], []  # per field: a plain decimal; (base, sign) of its exponent; < 0
        for start, end in spans:
            m = _DECIMAL.fullmatch(line[start:end])
            plain = m is not None and len(m.group(2)) + len(m.group(3) or b"") <= 15
            plain_fields.append(plain)
            digits = [start + i for g in (2, 3) if plain and m.group(g) for i in range(*m.span(g))]
            exp = [start + i for i in range(*m.span(5))] if plain and m.group(5) is not None else []
            mantissa.append([(len(offsets) + k, len(digits) - 1 - k) for k in range(len(digits))])
            offsets += digits
            power.append([(len(offsets) + k, len(exp) - 1 - k) for k in range(len(exp))])
            offsets += exp
            frac = len(m.group(3) or b"") if plain else 0
            exponents.append((-frac, -1 if plain and m.group(4) == b"-" else 1))
            negative.append(plain and m.group(1) == b"-")
        self.offsets = np.array(offsets, np.int64)
        self.weights = _weights(mantissa + power, len(offsets))  # mantissas, then written exponents
        # the digits of each field's mantissa, then of its written exponent, field after field (as in offsets)
        self.counts = np.array([len(digits) for pair in zip(mantissa, power) for digits in pair], np.int64)
        self.base = np.array([base for base, _ in exponents], np.int64)  # by field, for all fields at once
        self.sign = np.array([sign for _, sign in exponents], np.int64)
        self.plain = np.array(plain_fields, bool)
        self.negative = np.array(negative, bool)

    def read(self, block: LineBlock, rows: np.ndarray, native: ModuleType | None = None) -> list[np.ndarray]:
        """Each field's number in each of these lines (all of this shape), as float() reads it; the digits read by
        `native` (compiled_lines()) when given, else gathered by numpy: the same whole numbers either way."""
        if native is not None:
            numbers = np.empty((len(rows), len(self.counts)), np.int64)
            native.decimals(block.body, block.starts[rows], self.offsets, self.counts, numbers)
            # (whole numbers of at most 15 digits: exact as doubles, the very values the product below gives)
            mantissas, written = numbers[:, 0::2].astype(np.float64), numbers[:, 1::2]
        else:
            digits = (np.take(np.frombuffer(block.body, np.uint8), block.starts[rows][:, None] + self.offsets)
                      - np.uint8(48)).astype(np.float64)
            # exact in binary64: every product and partial sum is a whole number of at most 15 digits, below 2**53
            numbers = digits @ self.weights
            mantissas, written = numbers[:, :len(self.spans)], numbers[:, len(self.spans):].astype(np.int64)
        # every field at once (the same operations, element by element, as one field at a time)
        exponent = self.base + self.sign * written
        size = np.abs(exponent)
        slow = ~self.plain | (size > 22).any(axis=0)  # fields read by float(), line by line
        scale = _POW10[np.minimum(size, 22)]  # exact in binary64, so one rounding below: the double float() reads
        values = np.where(exponent >= 0, mantissas * scale, mantissas / scale)
        np.negative(values, out=values, where=self.negative)
        out = []
        for i, (start, end) in enumerate(self.spans):
            if slow[i]:
                first = block.starts[rows] + start
                fields = map(block.body.__getitem__, map(slice, first.tolist(), (first + (end - start)).tolist()))
                out.append(np.fromiter(map(float, fields), np.float64, len(rows)))
            else:
                out.append(values[:, i])
        return out


def _weights(fields: list[list[tuple[int, int]]], width: int) -> np.ndarray:
    """A (digits x fields) matrix: 10**power at each field's digits."""
    w = np.zeros((width, len(fields)), np.float64)
    for i, digits in enumerate(fields):
        for k, p in digits:
            w[k, i] = 10 ** p  # (exact in binary64: p < 15)
    return w


def no_jump(history: list[float], values: np.ndarray, factor: float) -> bool:
    """No value is more than `factor` times the least of the (up to WINDOW) values before it, once 3 came before:
    the progress checks' jump test (logscan._jump) cannot fire on any of them."""
    if not len(values):
        return True
    # at once: a window's least is no less than the least of all (a NaN fails this test, and the windows decide), and
    # factor * x rounds monotonically in x, so no value at most factor times the least is past it for any window
    lowest = float(np.minimum(values.min(), np.min(history))) if history else float(values.min())
    if float(values.max()) <= factor * lowest:
        return True
    seq = np.concatenate([np.full(WINDOW, np.inf), np.asarray(history, np.float64), values])
    mins = _window_mins(seq, len(history), len(values))
    seen = np.arange(len(history), len(history) + len(values))
    return not bool(((seen >= 3) & (values > factor * mins)).any())


def no_slowdown(recent: list[float], steps: np.ndarray, ratio: float, least: int) -> bool:
    """No step is past `ratio` times the mean of the (up to WINDOW) steps before it, once `least` came before, nor
    past `ratio` times the mean of the older half of a full window: the slowdown checks (logscan._slowdown: a jump,
    or a rise that crept in) cannot start a candidate on any of them. Flags with a margin over rounding, so a
    borderline step goes to the exact per-line check."""
    if not len(steps):
        return True
    # at once: a mean is no less than the least of all (a positive least: a NaN fails this test, and the windows
    # decide), but for a sum's rounding (relative 1e-15, far inside the 1e-6 kept here below the margin)
    lowest = float(np.minimum(steps.min(), np.min(recent))) if recent else float(steps.min())
    if lowest > 0 and float(steps.max()) <= ratio * lowest * (1 - 1e-6):
        return True
    seq = np.concatenate([np.zeros(WINDOW), np.asarray(recent, np.float64), steps])
    count = np.minimum(np.arange(len(recent), len(recent) + len(steps)), WINDOW)
    mean = _window_sums(seq, len(recent), len(steps), WINDOW) / np.maximum(count, 1)
    older = np.where(count == WINDOW, _window_sums(seq, len(recent), len(steps), WINDOW // 2) / (WINDOW // 2), np.inf)
    threshold = ratio * np.minimum(mean, older)
    return not bool(((count >= least) & (steps > threshold - 1e-9 * np.abs(threshold))).any())


def _window_mins(seq: np.ndarray, first: int, n: int) -> np.ndarray:
    """The least of each run of WINDOW values seq[first + i:first + i + WINDOW], i < n: WINDOW shifted passes, cheaper
    than a window view's reduction on a few hundred values."""
    out = seq[first:first + n].copy()
    for k in range(1, WINDOW):
        np.minimum(out, seq[first + k:first + k + n], out=out)
    return out


def _window_sums(seq: np.ndarray, first: int, n: int, width: int) -> np.ndarray:
    """The sum of each run of `width` values seq[first + i:first + i + width], i < n, in shifted passes. (A sum's
    rounding may differ from Python's sum in the last bits: no_slowdown's margin covers that.)"""
    out = seq[first:first + n].copy()
    for k in range(1, width):
        out += seq[first + k:first + k + n]
    return out


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
