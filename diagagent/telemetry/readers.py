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
        return parse_timestamp(value)


# --- flows ----------------------------------------------------------------------------------------------

FLOW_COLUMNS = ("start", "end", "src_ip", "dst_ip", "bytes")
FLOW_OPTIONAL = ("src_port", "dst_port", "packets")


def iter_flow_batches(path: Path, display: str, issues: list[ReadIssue],
                      batch_rows: int = 1 << 20) -> Iterator[pyarrow.RecordBatch]:  # noqa: F821
    """Flow records of one CSV(.gz) or Parquet file in batches, normalized: start/end float64 epoch seconds,
    src_ip/dst_ip strings, bytes float64, optional src_port/dst_port/packets. Never the whole file in memory."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    def normalize(batch: pa.RecordBatch) -> pa.RecordBatch:
        cols, names = [], []
        for name in FLOW_COLUMNS + FLOW_OPTIONAL:
            if name not in batch.schema.names:
                continue
            col = batch.column(name)
            if name in ("start", "end"):
                col = _to_epoch(col)
            elif name in ("src_ip", "dst_ip"):
                col = pc.cast(col, pa.string())
            else:
                col = pc.cast(col, pa.float64())
            cols.append(col)
            names.append(name)
        return pa.RecordBatch.from_arrays(cols, names=names)

    def _to_epoch(col: pa.Array) -> pa.Array:
        if pa.types.is_timestamp(col.type):
            return pc.divide(pc.cast(pc.cast(col, pa.timestamp("us")), pa.int64()), 1e6)
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            return pc.cast(col, pa.float64())
        for target in (pa.float64(), pa.timestamp("us", tz="UTC"), pa.timestamp("us")):
            try:
                return _to_epoch(pc.cast(col, target))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue
        # mixed epoch and ISO-8601 in one column: value by value
        return pa.array([_epoch_of(v) for v in col.to_pylist()], type=pa.float64())

    def check_header(names: list[str]) -> bool:
        missing = [c for c in FLOW_COLUMNS if c not in names]
        if missing:
            issues.append(ReadIssue(file=display, line=1,
                                    problem=f"flow file lacks column(s) {', '.join(missing)}; expected "
                                            f"{', '.join(FLOW_COLUMNS)} (got {', '.join(names)}); skipped"))
            return False
        return True

    try:
        if display.endswith(".parquet"):
            pf = pq.ParquetFile(path)
            names = pf.schema_arrow.names
            if not check_header(names):
                return
            wanted = [c for c in FLOW_COLUMNS + FLOW_OPTIONAL if c in names]
            for batch in pf.iter_batches(batch_size=batch_rows, columns=wanted):
                yield normalize(batch)
            return
        skipped = [0]

        def on_bad_row(row: pcsv.InvalidRow) -> str:
            skipped[0] += 1
            return "skip"

        reader = pcsv.open_csv(
            path,
            read_options=pcsv.ReadOptions(block_size=32 << 20),
            parse_options=pcsv.ParseOptions(invalid_row_handler=on_bad_row),
            convert_options=pcsv.ConvertOptions(column_types={"src_ip": pa.string(), "dst_ip": pa.string()}),
        )
        if not check_header(reader.schema.names):
            return
        for batch in reader:
            yield normalize(batch)
        if skipped[0]:
            issues.append(ReadIssue(file=display, count=skipped[0],
                                    problem="malformed flow rows (wrong number of fields), skipped"))
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError, EOFError, zlib.error) as exc:
        issues.append(ReadIssue(file=display, problem=f"flow records unreadable from here on: {exc}"))
