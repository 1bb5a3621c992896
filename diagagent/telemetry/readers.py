"""Streaming readers for the parts of a bundle: log lines, flow record batches, raw stack and probe text.

Readers never fail on a bad line: they decode with replacement, cut over-long lines, skip and count what they
cannot use (as `ReadIssue`s), and go on. Nothing is ever unpickled or evaluated.
"""

from __future__ import annotations

import functools
import gzip
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING

from diagagent.telemetry.errors import IssueKind, ReadIssue
from diagagent.telemetry.limits import ReadBudget
from diagagent.telemetry.records import render_record, sniff_records

if TYPE_CHECKING:
    import numpy as np

MAX_LINE_BYTES = 1 << 20  # a line longer than 1 MiB is cut there (and counted)
BLOCK_BYTES = 1 << 22  # files are read in blocks of this many (decompressed) bytes

_RANK_IN_NAME = re.compile(r"(?:^|[^a-z]|global)rank[-_. ]?(\d+)", re.IGNORECASE)  # not NeMo's "localrank"; Open
# MPI's --output-filename folder 'rank.9'
_RANK_PREFIX = re.compile(r"^\[(rank|default)(\d+)\]:")
_PROGRESS = re.compile(r"\d+%\|")


@functools.cache
def compiled_lines() -> ModuleType | None:
    """diagagent._lines, the log scan's per-byte passes in C, when the install compiled it (hatch_build.py); else
    None, and the scan runs the same passes in numpy and pyarrow (the same results: tests/test_lines_native.py)."""
    try:
        from diagagent import _lines
    except ImportError:
        return None
    return _lines


def newline_offsets(body: bytes, native: ModuleType | None = None) -> np.ndarray:
    """The offsets of body's newlines (int64): by `native` (compiled_lines()) when given, else by numpy."""
    import numpy as np

    if native is not None:
        return np.frombuffer(native.newlines(body), np.int64)
    return np.flatnonzero(np.frombuffer(body, np.uint8) == 10)


@dataclass(slots=True, frozen=True)
class LogFile:
    file: str  # path relative to the bundle root, with forward slashes
    host: str | None
    rank: int | None  # from the file name; None for node-level logs


@dataclass(slots=True)
class LogLine:
    file: str
    line: int  # 1-based physical line number (a `\r`-split line keeps its number)
    host: str | None
    rank: int | None
    text: str


@dataclass(slots=True, frozen=True)
class PartFile:
    """A stack dump or probe output file."""

    file: str
    host: str | None
    name: str  # probe name ("dmesg", "nvidia-smi") or stack file stem ("rank-136")
    rank: int | None = None


def rank_from_name(name: str) -> int | None:
    m = _RANK_IN_NAME.search(name)
    return int(m.group(1)) if m else None


def open_binary(path: Path) -> IO[bytes]:
    """A file's bytes, gzip-aware. For reading a bundle, use `LineChunks` or `read_text` (budgets, recovery)."""
    raw = path.open("rb")
    if path.name.endswith((".gz", ".tgz")):
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    return raw


def _decode(raw: bytes, bad: list[int], lineno: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        bad.append(lineno)
        return raw.decode("utf-8", errors="replace")


def _size(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} GiB"


class _Stop(Exception):
    """Reading one file stops here: a budget was hit or its compressed data broke (the reason says which)."""

    def __init__(self, kind: IssueKind, reason: str) -> None:
        super().__init__(reason)
        self.kind, self.reason = kind, reason


def _compressed_blocks(raw: IO[bytes], kind: str, block: int) -> Iterator[bytes]:
    """Decompressed blocks of a gzip or zstd stream (every member or frame), each at most `block` bytes; up to
    the break when the data is cut or corrupt (then `_Stop`), so nothing before it is lost."""
    if kind == "zst":
        yield from _zstd_blocks(raw, block)
        return
    gz = gzip.GzipFile(fileobj=raw)
    try:
        while True:
            data = gz.read1(block)  # one step at a time: what came before a break is kept
            if not data:
                return
            yield data
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        what = "ends before its end (the file was cut)" if isinstance(exc, EOFError) else f"breaks ({exc})"
        raise _Stop("truncated", f"compressed data {what}") from exc


def _zstd_blocks(raw: IO[bytes], block: int) -> Iterator[bytes]:
    import zstandard

    dctx = zstandard.ZstdDecompressor()
    dobj, started, feed = dctx.decompressobj(), False, b""
    while True:
        chunk = feed or raw.read(4096)  # small inputs keep one call's output small (zstd ratios reach 30,000:1)
        feed = b""
        if not chunk:
            if started and not dobj.eof:
                raise _Stop("truncated", "compressed data ends before its end (the file was cut)")
            return
        started = True
        try:
            out = dobj.decompress(chunk)
        except zstandard.ZstdError as exc:
            raise _Stop("truncated", f"compressed data breaks ({exc})") from exc
        for i in range(0, len(out), block):
            yield out[i:i + block]
        if dobj.eof:  # the next frame, if any
            feed, dobj, started = dobj.unused_data, dctx.decompressobj(), False


class LineBlock:
    """Whole lines as one bytes object (no trailing newline) and where each ends, for readers that work on a block
    at once instead of line by line. Line i is `body[starts[i]:ends[i]]`."""

    __slots__ = ("body", "ends", "starts")

    def __init__(self, body: bytes, newlines: np.ndarray | None = None) -> None:
        """`newlines`: the offsets of body's newlines, when the caller has them already."""
        import numpy as np

        self.body = body
        if newlines is None:
            newlines = newline_offsets(body)
        self.ends = np.append(newlines, len(body))
        self.starts = np.concatenate(([0], newlines + 1))

    def __len__(self) -> int:
        return len(self.ends)

    def longest(self) -> int:
        return int((self.ends - self.starts).max())

    def lines(self, first: int = 0, last: int | None = None) -> list[bytes]:
        """Lines `first` to `last` (exclusive) as a list."""
        if first == 0 and last is None:
            return self.body.split(b"\n")
        starts, ends = self.starts[first:last].tolist(), self.ends[first:last].tolist()
        return list(map(self.body.__getitem__, map(slice, starts, ends)))


class LineChunks:
    """The lines of one file in chunks: `(number of the chunk's first line, [line bytes without newline, ...])`.

    Streams in blocks and keeps to the budgets: bytes and lines per file and per pass (`ReadBudget`), the
    decompression ratio. A run of blank lines is handed on as one blank line (the numbers after it jump), so a
    file of a billion empty lines costs a few block scans. Reads a cut .gz/.zst up to the break. Every stop
    (budget, break) is one `ReadIssue` in `issues` naming the file, the budget and what was read."""

    def __init__(self, path: Path, display: str, issues: list[ReadIssue], budget: ReadBudget | None = None,
                 max_line: int = MAX_LINE_BYTES, block: int = BLOCK_BYTES, blocks: bool = False,
                 next_block: int | None = None, native: ModuleType | None = None,
                 buffer: bytearray | None = None) -> None:
        self.path, self.display, self.issues = path, display, issues
        self.native = native  # compiled_lines(), to find a block's newlines (else numpy finds them)
        # a plain file is read into this buffer (a caller that reads many files hands the same one to each: memory
        # written before is not mapped afresh by the kernel, which costs more than the copy); lines leave it as bytes
        self.buffer = buffer
        self.blocks = blocks  # hand a chunk on as one LineBlock where it needs no per-line care (blank runs, cut lines)
        self.budget = budget if budget is not None else ReadBudget()
        self.max_line, self.block = max_line, block
        self.next_block = next_block or block  # the reads of a plain file after its first
        self.lines = 0  # physical lines read
        self.bytes = 0  # (decompressed) bytes read
        self.kept = 0  # lines handed on (blank runs count once)
        self.cut: list[int] = []  # lines longer than max_line, cut there
        self.records: bool | None = None  # JSON-lines log records, each handed on as the plain line it stands for

    # --- bytes --------------------------------------------------------------------------------------------

    def _blocks(self) -> Iterator[tuple[bytes | bytearray, int]]:
        """The file's (decompressed) blocks, each as (buffer, length): its bytes are buffer[:length]. A plain file's
        buffer is the same bytearray each time, overwritten by the next block."""
        limits, budget = self.budget.limits, self.budget
        name = self.path.name
        kind = "gz" if name.endswith((".gz", ".tgz")) else "zst" if name.endswith((".zst", ".zstd")) else ""
        with self.path.open("rb") as raw:
            source = ((data, len(data)) for data in _compressed_blocks(raw, kind, self.block)) if kind \
                else self._reads(raw)
            for data, n in source:
                if self.records is None:  # (known by the first block's first lines)
                    self.records = sniff_records(bytes(data[:min(n, 1 << 16)]))
                    self.blocks = self.blocks and not self.records
                room = min(limits.file_bytes - self.bytes, budget.bytes_left)
                if n > room:
                    n = max(room, 0)
                    which = ("file_bytes" if limits.file_bytes - self.bytes <= budget.bytes_left else "bundle_bytes")
                    cap = limits.file_bytes if which == "file_bytes" else limits.bundle_bytes
                    self._take(n)
                    if n:
                        yield data, n
                    raise _Stop("budget", f"read budget limits.{which} ({_size(cap)}) reached")
                self._take(n)
                yield data, n
                if kind and self.bytes >= limits.ratio_after_bytes:
                    ratio = self.bytes / max(raw.tell(), 1)
                    if ratio > limits.max_ratio:
                        raise _Stop("budget", f"decompression ratio {ratio:,.0f}:1 is over limits.max_ratio "
                                              f"({limits.max_ratio:,.0f}:1; a compression bomb?)")

    def _reads(self, raw: IO[bytes]) -> Iterator[tuple[bytes | bytearray, int]]:
        size = self.block
        buffer = self.buffer
        if buffer is None or len(buffer) < max(self.block, self.next_block):
            while data := raw.read(size):
                yield data, len(data)
                size = self.next_block
            return
        with memoryview(buffer) as view:
            while n := raw.readinto(view[:size]):  # type: ignore[attr-defined]
                yield buffer, n
                size = self.next_block

    def _take(self, n: int) -> None:
        self.bytes += n
        self.budget.bytes_left -= n

    # --- lines --------------------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[tuple[int, list[bytes]]]:
        tail = b""
        cutting = False  # inside a line longer than max_line whose start was handed on: drop the rest
        stop: _Stop | None = None
        try:
            try:
                for data, n in self._blocks():  # (the block is data[:n]; a plain file's data is overwritten next)
                    start = 0
                    if cutting:
                        end = data.find(b"\n", 0, n)
                        if end < 0:
                            continue
                        start, cutting = end + 1, False
                    last = data.rfind(b"\n", start, n)
                    with memoryview(data) as view:
                        if last < 0:
                            body, tail = None, tail + view[start:n]
                        else:  # (one copy of the block's bytes: the tail joined to a view of them)
                            body = b"".join((tail, view[start:last])) if tail else bytes(view[start:last])
                            tail = bytes(view[last + 1:n])
                    if body is not None:
                        yield from self._chunks(body)
                    if len(tail) > self.max_line:
                        yield from self._chunks(tail[:self.max_line], cut=True)
                        tail, cutting = b"", True
            except _Stop as exc:
                stop = exc
            if tail:
                yield from self._chunks(tail)
        except _Stop as exc:  # the line budget, hit while handing lines on
            stop = exc
        except OSError as exc:
            stop = _Stop("truncated", f"read error ({exc.strerror or exc})")
        if stop is not None:
            self.issues.append(ReadIssue(
                file=self.display, line=self.lines + 1, kind=stop.kind,
                problem=f"{stop.reason}: read {self.lines:,} lines ({_size(self.bytes)}) before it, the rest skipped"))
        if self.cut:
            self.issues.append(ReadIssue(file=self.display, line=self.cut[0], count=len(self.cut),
                                         problem=f"line longer than {self.max_line} bytes, cut there"))

    def _chunks(self, body: bytes, cut: bool = False) -> Iterator[tuple[int, list[bytes]]]:
        """The lines of `body` (whole lines, the last without its newline), to the line budgets."""
        newlines = None
        if self.blocks and not cut:  # the newlines are found once, for the count and the LineBlock
            newlines = newline_offsets(body, self.native)
            n = len(newlines) + 1
        else:
            n = body.count(b"\n") + 1
        limits, budget = self.budget.limits, self.budget
        room = min(limits.file_lines - self.lines, budget.lines_left)
        over = n > room
        if over:
            which = "file_lines" if limits.file_lines - self.lines <= budget.lines_left else "bundle_lines"
            cap = limits.file_lines if which == "file_lines" else limits.bundle_lines
            n = max(room, 0)
            body = b"\n".join(body.split(b"\n", n)[:n]) if n else b""
            newlines = None
        if n:
            first = self.lines + 1
            if n * 8 > len(body) and n > 64:  # mostly empty lines: hand on each run of blank lines once
                yield from self._squeezed(body, first)
            elif self.blocks and not cut and (block := LineBlock(body, newlines)).longest() <= self.max_line:
                self.kept += n
                yield first, block  # type: ignore[misc]
            else:
                lines = body.split(b"\n")
                if len(body) > self.max_line and max(map(len, lines)) > self.max_line:
                    lines = self._cut_long(lines, first)
                if cut:
                    self.cut.append(first)
                self.kept += len(lines)
                yield first, self._rendered(lines)
            self.lines += n
            budget.lines_left -= n
        if over:
            raise _Stop("budget", f"read budget limits.{which} ({cap:,} lines) reached")

    def _squeezed(self, body: bytes, first: int) -> Iterator[tuple[int, list[bytes]]]:
        pos, lineno = 0, first
        for m in _BLANK_RUN.finditer(body):
            start, end = m.span()
            run = body.count(b"\n", start, end)  # blank lines in this run
            if run < 2:
                continue
            lines = self._fit(body[pos:start].split(b"\n"), lineno)  # ends with the run's first blank line
            self.kept += len(lines)
            yield lineno, self._rendered(lines)
            lineno += len(lines) - 1 + run
            pos = end
        lines = self._fit(body[pos:].split(b"\n"), lineno)
        self.kept += len(lines)
        yield lineno, self._rendered(lines)

    def _rendered(self, lines: list[bytes]) -> list[bytes]:
        return _render_records(lines) if self.records else lines

    def _fit(self, lines: list[bytes], first: int) -> list[bytes]:
        """`lines`, each longer than max_line cut there (and counted)."""
        if not lines or max(map(len, lines)) <= self.max_line:
            return lines
        return self._cut_long(lines, first)

    def _cut_long(self, lines: list[bytes], first: int) -> list[bytes]:
        out = []
        for i, line in enumerate(lines):
            if len(line) > self.max_line:
                self.cut.append(first + i)
                line = line[:self.max_line]
            out.append(line)
        return out


def _render_records(lines: list[bytes]) -> list[bytes]:
    """A JSON-lines file's lines, each record as the plain line it stands for (other lines as they are)."""
    return [render_record(line) if line[:1] == b"{" else line for line in lines]


# blank (whitespace-only) lines from the start of a line, each with its newline (one character class: a fast loop)
_BLANK_RUN = re.compile(rb"(?<![^\n])[ \t\r\f\v\n]*\n")


def iter_raw_lines(path: Path, display: str, issues: list[ReadIssue],
                   budget: ReadBudget | None = None) -> Iterator[tuple[int, str]]:
    """(line number, text) for each physical line, newline stripped; of a run of blank lines only the first (the
    numbers after it jump); problems go to `issues`."""
    bad: list[int] = []
    for first, lines in LineChunks(path, display, issues, budget):
        for i, raw in enumerate(lines):
            yield first + i, _decode(raw.rstrip(b"\r"), bad, first + i)
    if bad:
        issues.append(ReadIssue(file=display, line=bad[0], count=len(bad),
                                problem="bytes that are not UTF-8, replaced with U+FFFD"))


def _split_progress(text: str) -> list[str]:
    """A `\\r`-joined line (tqdm) -> the segments a reader cares about: every non-progress one, and the last."""
    segs = [s for s in text.split("\r") if s.strip()]
    if len(segs) <= 1:
        return segs
    keep = [s for s in segs[:-1] if not _PROGRESS.search(s)]
    keep.append(segs[-1])
    return keep


def iter_log_lines(root: Path, lf: LogFile, issues: list[ReadIssue],
                   local_to_global: dict[int, int] | None = None, budget: ReadBudget | None = None) -> Iterator[LogLine]:
    """Every line of one log file (a run of blank lines gives its first), with host and rank (from the file name,
    or a `[rankN]:` / `[defaultN]:` prefix)."""
    for lineno, text in iter_raw_lines(root / lf.file, lf.file, issues, budget):
        parts = _split_progress(text) if "\r" in text else [text]
        for part in parts:
            rank = lf.rank
            if rank is None and part.startswith("["):
                m = _RANK_PREFIX.match(part)
                if m:
                    n = int(m.group(2))
                    rank = n if m.group(1) == "rank" else (local_to_global or {}).get(n)
            yield LogLine(lf.file, lineno, lf.host, rank, part)


def read_text(path: Path, display: str, issues: list[ReadIssue], limit: int = 64 << 20,
              budget: ReadBudget | None = None) -> str:
    """A whole (small) file as text, gzip/zstd-aware, decoded with replacement; at most `limit` bytes (a cut
    compressed file up to its break)."""
    chunks = LineChunks(path, display, issues, budget, max_line=limit + 1)
    parts: list[bytes] = []
    try:
        for data, n in chunks._blocks():
            block = data[:n]
            parts.append(block[:limit - chunks.bytes + len(block)] if chunks.bytes > limit else block)
            if chunks.bytes >= limit:
                if chunks.bytes > limit:
                    issues.append(ReadIssue(file=display, kind="budget",
                                            problem=f"only the first {_size(limit)} read (the file is longer)"))
                break
    except _Stop as exc:
        issues.append(ReadIssue(file=display, kind=exc.kind,
                                problem=f"{exc.reason}: read {_size(chunks.bytes)} before it, the rest skipped"))
    except OSError as exc:
        issues.append(ReadIssue(file=display, problem=f"read error: {exc.strerror or exc}"))
        return ""
    data = b"".join(parts)
    if chunks.records:  # JSON log records (`journalctl -k -o json` as a probe): the lines they stand for
        data = b"\n".join(_render_records(data.split(b"\n")))
    text = data.decode("utf-8", errors="replace")
    if "\ufffd" in text and "\ufffd".encode() not in data:
        issues.append(ReadIssue(file=display, problem="bytes that are not UTF-8, replaced with U+FFFD"))
    return text


def _epoch_of(value: str | None) -> float | None:
    from diagagent.telemetry.timestamps import parse_timestamp

    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return parse_timestamp(value)
    except (ValueError, OverflowError):  # a time-like cell that is no time (month 13, hour 99)
        return None


# --- flows ----------------------------------------------------------------------------------------------

FLOW_COLUMNS = ("start", "end", "src_ip", "dst_ip", "bytes")
FLOW_OPTIONAL = ("src_port", "dst_port", "packets")
_FLOW_EXPECTED = {"start": "epoch seconds or ISO-8601 times", "end": "epoch seconds or ISO-8601 times",
                  "src_ip": "addresses", "dst_ip": "addresses"}  # the rest: numbers


def iter_flow_batches(path: Path, display: str, issues: list[ReadIssue],
                      batch_rows: int = 1 << 20) -> Iterator[pyarrow.RecordBatch]:  # noqa: F821
    """Flow records of one CSV(.gz) or Parquet file in batches, normalized: start/end float64 epoch seconds,
    src_ip/dst_ip strings, bytes float64, optional src_port/dst_port/packets. Never the whole file in memory.

    Never raises (but MemoryError): a cell that is not a number or a time is left empty (its record is then
    skipped as malformed, or keeps an empty optional cell), counted per column; a row with the wrong number of
    fields is skipped and counted; a Parquet column of a type that is no number or time skips the file. Each
    problem goes to `issues`, naming the file."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    bad: dict[str, list[int]] = {}  # column -> [cells left empty, first data row]
    rows = 0
    try:
        if display.endswith(".parquet"):
            pf = pq.ParquetFile(path)
            schema = pf.schema_arrow
            if not _flow_header(schema.names, display, issues):
                return
            wanted = [c for c in FLOW_COLUMNS + FLOW_OPTIONAL if c in schema.names]
            wrong = [f"{c} holds {schema.field(c).type} (expected {_FLOW_EXPECTED.get(c, 'numbers')})"
                     for c in wanted if not _flow_type_ok(c, schema.field(c).type)]
            if wrong:
                issues.append(ReadIssue(file=display, problem=f"column {'; column '.join(wrong)}; file skipped"))
                return
            for batch in pf.iter_batches(batch_size=batch_rows, columns=wanted):
                yield _normalize_flows(batch, rows, bad)
                rows += batch.num_rows
            return
        names = _csv_header(path)
        if not _flow_header(names, display, issues):
            return
        skipped = [0]

        def on_bad_row(row: pcsv.InvalidRow) -> str:
            skipped[0] += 1
            return "skip"

        wanted = [c for c in FLOW_COLUMNS + FLOW_OPTIONAL if c in names]
        reader = pcsv.open_csv(  # every column as text, converted here: one bad cell costs one cell, not a block
            path,
            read_options=pcsv.ReadOptions(block_size=32 << 20),
            parse_options=pcsv.ParseOptions(invalid_row_handler=on_bad_row),
            convert_options=pcsv.ConvertOptions(column_types={c: pa.string() for c in wanted},
                                                include_columns=wanted),
        )
        for batch in reader:
            yield _normalize_flows(batch, rows, bad)
            rows += batch.num_rows
        if skipped[0]:
            issues.append(ReadIssue(file=display, count=skipped[0],
                                    problem="malformed flow rows (wrong number of fields), skipped"))
    except MemoryError:
        raise
    except (pa.ArrowException, OSError, EOFError, zlib.error, ValueError) as exc:
        issues.append(ReadIssue(file=display, problem=f"flow records unreadable from here on, after {rows} "
                                                      f"record(s): {str(exc)[:300]}"))
    finally:
        for name, (count, first) in bad.items():
            kept = "their records skipped" if name in FLOW_COLUMNS else "the cells left empty"
            issues.append(ReadIssue(file=display, count=count, problem=f"cells in column {name} that are not "
                                    f"{_FLOW_EXPECTED.get(name, 'numbers')} (the first in data row {first}), {kept}"))


def _csv_header(path: Path) -> list[str]:
    """The column names on a CSV file's first line (gzip-aware; a UTF-8 byte order mark dropped)."""
    import csv

    with open_binary(path) as f:
        first = f.readline(1 << 16).decode("utf-8-sig", errors="replace")
    return [name.strip() for name in next(csv.reader([first]), [])]


def _flow_header(names: list[str], display: str, issues: list[ReadIssue]) -> bool:
    missing = [c for c in FLOW_COLUMNS if c not in names]
    if missing:
        issues.append(ReadIssue(file=display, line=1,
                                problem=f"flow file lacks column(s) {', '.join(missing)}; expected "
                                        f"{', '.join(FLOW_COLUMNS)} (got {', '.join(names)[:300]}); skipped"))
        return False
    return True


def _flow_type_ok(name: str, t: pyarrow.DataType) -> bool:  # noqa: F821
    """Whether a Parquet column of type `t` can be read as flow column `name` (cast where that is safe)."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    text = pa.types.is_string(t) or pa.types.is_large_string(t)
    number = pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
    if name in ("src_ip", "dst_ip"):
        return text or pa.types.is_integer(t)
    if name in ("start", "end"):
        return text or number or pa.types.is_timestamp(t) or pa.types.is_date(t)
    return text or number


def _normalize_flows(batch: pyarrow.RecordBatch, offset: int,  # noqa: F821
                     bad: dict[str, list[int]]) -> pyarrow.RecordBatch:  # noqa: F821
    """One batch with the flow columns converted; cells that do not convert are left empty and counted in `bad`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cols, names = [], []
    for name in FLOW_COLUMNS + FLOW_OPTIONAL:
        if name not in batch.schema.names:
            continue
        col = batch.column(name)
        if pa.types.is_dictionary(col.type):
            col = col.dictionary_decode()
        if name in ("src_ip", "dst_ip"):
            out = pc.cast(col, pa.string())
        else:
            out = _to_epoch(col) if name in ("start", "end") else _to_float(col)
            lost = pc.and_(col.is_valid(), out.is_null())
            n = pc.sum(lost).as_py() or 0
            if n:
                first = offset + pc.index(lost, True).as_py() + 1
                count = bad.setdefault(name, [0, first])
                count[0] += n
        cols.append(out)
        names.append(name)
    return pa.RecordBatch.from_arrays(cols, names=names)


def _to_float(col: pyarrow.Array) -> pyarrow.Array:  # noqa: F821
    """Numbers as float64; text parsed, and a cell that is not a number left empty."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        return pc.cast(col, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        return pa.nulls(len(col), pa.float64())
    import polars as pl  # here, not above: only text with a cell Arrow cannot parse needs it

    return pl.from_arrow(col).str.strip_chars().cast(pl.Float64, strict=False).to_arrow()


_EPOCH_UNITS = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}


def _to_epoch(col: pyarrow.Array) -> pyarrow.Array:  # noqa: F821
    """Times as float64 epoch seconds: numbers as they are, timestamps of any unit and time zone (Arrow keeps
    them in UTC), dates, ISO-8601 text; mixed epoch and ISO text value by value; anything else left empty."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_timestamp(col.type):
        return pc.divide(pc.cast(pc.cast(col, pa.int64()), pa.float64(), safe=False), _EPOCH_UNITS[col.type.unit])
    if pa.types.is_date(col.type):
        return _to_epoch(pc.cast(col, pa.timestamp("s")))
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        return _to_float(col)
    for target in (pa.float64(), pa.timestamp("us", tz="UTC"), pa.timestamp("us")):
        try:
            return _to_epoch(pc.cast(col, target))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
    # mixed epoch and ISO-8601 in one column, or a cell that is neither: value by value
    return pa.array([_epoch_of(v) for v in col.to_pylist()], type=pa.float64())
