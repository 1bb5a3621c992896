"""Streaming readers for the parts of a bundle: log lines, flow record batches, raw stack and probe text.

Readers never fail on a bad line: they decode with replacement, cut over-long lines, skip and count what they
cannot use (as `ReadIssue`s), and go on. Nothing is ever unpickled or evaluated.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from diagagent.telemetry.errors import ReadIssue

MAX_LINE_BYTES = 1 << 20  # a line longer than 1 MiB is cut there (and counted)

_RANK_IN_NAME = re.compile(r"(?:^|[^a-z]|global)rank[-_ ]?(\d+)", re.IGNORECASE)  # not NeMo's "localrank"
_RANK_PREFIX = re.compile(r"^\[(rank|default)(\d+)\]:")
_PROGRESS = re.compile(r"\d+%\|")


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


def iter_raw_lines(path: Path, display: str, issues: list[ReadIssue]) -> Iterator[tuple[int, str]]:
    """(line number, text) for every physical line, newline stripped; problems go to `issues`."""
    bad: list[int] = []
    cut: list[int] = []
    lineno = 0
    try:
        with open_binary(path) as f:
            while True:
                raw = f.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    break
                lineno += 1
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    cut.append(lineno)
                    while True:  # drop the rest of the over-long line
                        more = f.readline(MAX_LINE_BYTES)
                        if not more or more.endswith(b"\n"):
                            break
                    raw = raw[:MAX_LINE_BYTES]
                yield lineno, _decode(raw.rstrip(b"\r\n"), bad, lineno)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        issues.append(ReadIssue(file=display, line=lineno + 1,
                                problem=f"compressed data ends or breaks here ({exc}); read {lineno} lines before it"))
    except OSError as exc:
        issues.append(ReadIssue(file=display, line=lineno + 1 if lineno else None, problem=f"read error: {exc}"))
    if bad:
        issues.append(ReadIssue(file=display, line=bad[0], count=len(bad),
                                problem="bytes that are not UTF-8, replaced with U+FFFD"))
    if cut:
        issues.append(ReadIssue(file=display, line=cut[0], count=len(cut),
                                problem=f"line longer than {MAX_LINE_BYTES} bytes, cut there"))


def _split_progress(text: str) -> list[str]:
    """A `\\r`-joined line (tqdm) -> the segments a reader cares about: every non-progress one, and the last."""
    segs = [s for s in text.split("\r") if s.strip()]
    if len(segs) <= 1:
        return segs
    keep = [s for s in segs[:-1] if not _PROGRESS.search(s)]
    keep.append(segs[-1])
    return keep


def iter_log_lines(root: Path, lf: LogFile, issues: list[ReadIssue],
                   local_to_global: dict[int, int] | None = None) -> Iterator[LogLine]:
    """Every line of one log file, with host and rank (from the file name, or a `[rankN]:` / `[defaultN]:` prefix)."""
    for lineno, text in iter_raw_lines(root / lf.file, lf.file, issues):
        parts = _split_progress(text) if "\r" in text else [text]
        for part in parts:
            rank = lf.rank
            if rank is None and part.startswith("["):
                m = _RANK_PREFIX.match(part)
                if m:
                    n = int(m.group(2))
                    rank = n if m.group(1) == "rank" else (local_to_global or {}).get(n)
            yield LogLine(lf.file, lineno, lf.host, rank, part)


def read_text(path: Path, display: str, issues: list[ReadIssue], limit: int = 64 << 20) -> str:
    """A whole (small) file as text, gzip-aware, decoded with replacement; at most `limit` bytes."""
    try:
        with open_binary(path) as f:
            data = f.read(limit)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        issues.append(ReadIssue(file=display, problem=f"compressed data breaks ({exc}); nothing read"))
        return ""
    except OSError as exc:
        issues.append(ReadIssue(file=display, problem=f"read error: {exc}"))
        return ""
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
    import polars as pl
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        return pc.cast(col, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        return pa.nulls(len(col), pa.float64())
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
