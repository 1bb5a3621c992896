"""JSON-lines log records (a log shipper's or a JSON logger's) rendered as the plain log line they stand for.

One record, one line, so every line number stays the file's own: `<time> <LEVEL> [rankN]: <message>`.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

SNIFF_LINES = 50  # a file whose first this many non-blank lines hold a record is read as records

# The keys of the documented record formats, first match wins:
# - Docker's json-file driver: {"log": "...\n", "stream": "stderr", "time": "2024-...Z"}
# - python-json-logger: {"asctime"|"time"|"timestamp", "levelname"|"level", "name", "message", "exc_info"}
# - zap / zerolog / logrus (Kubeflow's training operator, Go services): {"level", "ts"|"time", "msg", "error"}
# - structlog: {"event", "level", "timestamp"}
# - Google Cloud Logging exports: {"textPayload"|"jsonPayload": {"message"}, "severity", "timestamp"}
# - CloudWatch exports: {"timestamp": epoch ms, "message"}
# - `journalctl -o json`: {"MESSAGE", "PRIORITY": "3", "__REALTIME_TIMESTAMP": epoch us}
_MESSAGE_KEYS = ("message", "msg", "log", "textPayload", "MESSAGE", "event", "line")
_TIME_KEYS = ("time", "ts", "timestamp", "@timestamp", "asctime", "__REALTIME_TIMESTAMP", "t")
_LEVEL_KEYS = ("level", "levelname", "severity", "lvl", "PRIORITY", "loglevel")
_EXCEPTION_KEYS = ("exc_info", "exc_text", "exception", "stack_trace", "traceback", "stacktrace", "error")
# syslog's priorities, as journald writes them (PRIORITY "0".."7")
_PRIORITY = ("EMERG", "ALERT", "CRITICAL", "ERROR", "WARNING", "NOTICE", "INFO", "DEBUG")
_TRACEBACK = "Traceback (most recent call last)"
_CONTINUED = re.compile(r"\s|During handling|The above exception|$")  # a traceback's frames, source and bridges


def is_record(line: bytes) -> bool:
    """Whether a line is a JSON log record (an object holding a message under a documented key)."""
    return _record_of(line) is not None


def sniff_records(head: bytes) -> bool:
    """Whether a file, by its first bytes, holds JSON log records (then each of its record lines is rendered)."""
    lines = [line for line in head.split(b"\n")[:SNIFF_LINES * 4] if line.strip()][:SNIFF_LINES]
    return any(line.lstrip()[:1] == b"{" and is_record(line) for line in lines)


def render_record(line: bytes) -> bytes:
    """The plain log line a record stands for; a line that is no record comes back as it was (a JSON logger's file
    often holds the interpreter's own stderr too)."""
    record = _record_of(line)
    if record is None:
        return line
    message = _message(record)
    # an indented message is a piece of what the process printed over several lines (a traceback's frame or source
    # line) that the shipper made a record of its own: the severity it gave it is the stream's (stderr: ERROR), not the
    # program's, and the indentation says what the piece is (blind incident vertex-jax-orbax-nfs-stale-handle, Cloud
    # Logging's one entry per stderr line)
    level = None if message[:1].isspace() else _level(record)
    parts = [part for part in (_time(record), level) if part]
    rank = record.get("rank")
    if isinstance(rank, int) or isinstance(rank, str) and rank.isdigit():
        parts.append(f"[rank{rank}]:")
    parts.append(message)
    return " ".join(parts).encode("utf-8", "replace")


def _record_of(line: bytes) -> dict | None:
    text = line.strip()
    if text[:1] != b"{" or text[-1:] != b"}":
        return None
    try:
        record = json.loads(text)
    except ValueError:  # (a Python dict printed with single quotes, a cut line)
        return None
    if not isinstance(record, dict):
        return None
    payload = record.get("jsonPayload")
    if isinstance(payload, dict) and isinstance(payload.get("message"), str):
        record = {**record, "message": payload["message"]}
    return record if any(isinstance(record.get(key), str) for key in _MESSAGE_KEYS) else None


def _message(record: dict) -> str:
    """The message's telling line: the exception that ends a traceback the record holds (in its message or an
    exception field), else the message's first non-blank line. A record is one line, so a multi-line message gives
    one of its lines."""
    message = next(record[key] for key in _MESSAGE_KEYS if isinstance(record.get(key), str))
    for text in (message, *(record.get(key) for key in _EXCEPTION_KEYS)):
        if isinstance(text, str) and _TRACEBACK in text:
            exception = _exception_line(text)
            if exception:
                return exception
    lines = [line for line in message.splitlines() if line.strip()]
    first = lines[0].rstrip() if lines else ""
    error = record.get("error")  # zap's and logrus's error field: "failed to create pod" + "error": "..."
    if isinstance(error, str) and error.strip() and error not in first:
        first = f"{first}: {error.strip().splitlines()[0]}"
    return first


def _exception_line(text: str) -> str | None:
    """The last exception line of a traceback: the first unindented line after its last `Traceback` header's frames."""
    after = text[text.rindex(_TRACEBACK):].splitlines()[1:]
    return next((line.rstrip() for line in after if not _CONTINUED.match(line)), None)


def _time(record: dict) -> str | None:
    for key in _TIME_KEYS:
        value = record.get(key)
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float):
            seconds = value / 1e6 if value > 1e14 else value / 1e3 if value > 1e11 else value  # us, ms or s
            try:
                return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            except (ValueError, OverflowError, OSError):
                return None
        if isinstance(value, str):
            return value.strip()
    return None


def _level(record: dict) -> str | None:
    for key in _LEVEL_KEYS:
        value = record.get(key)
        if key == "PRIORITY" and isinstance(value, str) and value.isdigit() and int(value) < len(_PRIORITY):
            return _PRIORITY[int(value)]
        if isinstance(value, str) and value.strip():
            word = value.strip().upper()
            return "WARNING" if word == "WARN" else word
    return None
