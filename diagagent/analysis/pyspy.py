"""Parser for `py-spy dump` output, text and `--json`: several dumps per file, every thread, native frames.

Odd or truncated input is skipped and counted in `PySpyParse.skipped`; a file that cannot be read at all raises a
`FileError` naming it (`parse_dump`). Nothing is evaluated.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from diagagent.telemetry.errors import file_errors

EXPECTED = "py-spy dump output (text, or --json)"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_PROCESS = re.compile(r"^Process (\d{1,18}): ?(.*)$")  # a pid of more digits is not a pid
_PARENT = re.compile(r"^Parent Process (\d{1,18}): ?(.*)$")
_PYTHON = re.compile(r"^Python v(\S+)(?: \((.*)\))?$")
_THREAD = re.compile(r'^Thread (\S+) \((idle|active\+gil|active|gil)\)(?:: "(.*)")?\s*$')
_LOCAL_RANK = re.compile(r"--local[-_]rank[= ](\d+)")


class Frame(NamedTuple):
    """One stack frame as py-spy printed it (innermost first in a thread's list)."""

    function: str
    file: str
    line: int  # 0 when py-spy printed none
    native: bool


@dataclass(slots=True)
class ThreadStack:
    thread_id: str
    status: str  # idle | active | active+gil | gil
    name: str | None
    frames: list[Frame]
    frame_lines: list[int] = field(default_factory=list)  # each frame's 1-based line in the dump text (none in JSON)

    @property
    def idle(self) -> bool:
        return self.status == "idle"


@dataclass(slots=True)
class ProcessDump:
    """One `py-spy dump` of one process: its header and every thread."""

    pid: int | None
    command: str
    python: str | None
    parent_pid: int | None
    line: int  # 1-based line of the `Process` header (1 for JSON)
    threads: list[ThreadStack] = field(default_factory=list)

    @property
    def local_rank(self) -> int | None:
        m = _LOCAL_RANK.search(self.command)
        return int(m.group(1)) if m else None

    def main_thread(self, printed_oldest_first: bool = True) -> ThreadStack | None:
        """The thread that runs the job: the process's main thread (named MainThread, or the thread whose id is the
        pid, else py-spy's oldest), except in a Ray worker, whose main thread waits in Ray's task loop while Ray
        Train runs the training function in a thread of its own (`train_fn` in ray/train/_internal/utils.py)."""
        main = self._main_thread(printed_oldest_first)
        if main is not None and main.frames and main.frames[0].function == "main_loop" \
                and main.frames[0].file.replace("\\", "/").endswith("ray/_private/worker.py"):
            return next((t for t in self.threads if any(f.function == "train_fn" and "ray/train/" in
                                                        f.file.replace("\\", "/") for f in t.frames)), main)
        return main

    def _main_thread(self, printed_oldest_first: bool) -> ThreadStack | None:
        if not self.threads:
            return None
        for t in self.threads:
            if t.name == "MainThread":
                return t
        if self.pid is not None:
            for t in self.threads:
                if t.thread_id == str(self.pid):
                    return t
        return self.threads[0] if printed_oldest_first else self.threads[-1]


@dataclass(slots=True)
class PySpyParse:
    dumps: list[ProcessDump]
    skipped: int = 0  # lines or records that were not py-spy output, or were cut
    problems: list[str] = field(default_factory=list)  # the first few, for the report
    json: bool = False
    first_line: int | None = None  # the line of the first skipped part, where known


def _is_native(file: str) -> bool:
    """Python frames come from .py/.pyx files or `<frozen ...>`-style names; everything else is native code."""
    return not (file.endswith((".py", ".pyx", ".pyw")) or file.startswith("<"))


def parse_frame_line(text: str, cache: dict[str, Frame]) -> Frame | None:
    """`    function (file:line)` or `    function (file)` -> Frame; None if the line is not a frame."""
    hit = cache.get(text)
    if hit is not None:
        return hit
    body = text.strip()
    cut = body.rfind(" (")
    if cut <= 0 or not body.endswith(")"):
        return None
    function, where = body[:cut], body[cut + 2:-1]
    line = 0
    head, sep, tail = where.rpartition(":")
    if sep and tail.isdigit() and len(tail) <= 9:
        where, line = head, int(tail)
    frame = Frame(function, where, line, _is_native(where) or function.startswith("0x"))
    if len(cache) < 200_000:
        cache[text] = frame
    return frame


def parse_text(text: str, cache: dict[str, Frame] | None = None) -> PySpyParse:
    """Every `Process ...` section of py-spy's text output, in order. Lines that fit nowhere are counted."""
    cache = {} if cache is None else cache
    out = PySpyParse(dumps=[])
    dump: ProcessDump | None = None
    thread: ThreadStack | None = None
    if "\x1b[" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    for n, line in enumerate(text.split("\n"), start=1):
        if line.startswith("    "):  # the hot path: a frame (or, at 8 spaces, a --locals line of the last frame)
            if thread is None:
                _skip(out, n, "a frame or locals line outside any thread")
                continue
            frame = cache.get(line)
            if frame is None:
                if line.startswith("        "):
                    continue
                frame = parse_frame_line(line, cache)
                if frame is None:
                    _skip(out, n, "not a py-spy frame line")
                    continue
            thread.frames.append(frame)
            thread.frame_lines.append(n)
            continue
        if not line or line.isspace():
            continue
        if line.startswith("Thread "):
            m = _THREAD.match(line)
            if m is None:
                thread = None
                _skip(out, n, "a thread header that py-spy does not print")
                continue
            if dump is None and (out.dumps or out.skipped):
                thread = None
                _skip(out, n, "a thread before any Process header")
                continue
            if dump is None:  # a paste that starts at its threads, the 'Process N: ...' header left out
                # (dev:torchtitan-1342): they are one process's, of unknown pid
                dump = ProcessDump(0, "", None, None, n)
                out.dumps.append(dump)
            thread = ThreadStack(m.group(1), m.group(2), m.group(3), [])
            dump.threads.append(thread)
            continue
        if line.startswith("Process "):
            m = _PROCESS.match(line)
            if m:
                dump = ProcessDump(int(m.group(1)), m.group(2).strip(), None, None, n)
                out.dumps.append(dump)
                thread = None
                continue
        elif line.startswith("Python v") and dump is not None and not dump.threads:
            m = _PYTHON.match(line)
            if m:
                dump.python = m.group(1)
                continue
        elif line.startswith("Parent Process ") and dump is not None:
            m = _PARENT.match(line)
            if m:
                dump.parent_pid = int(m.group(1))
                continue
        elif set(line.strip()) <= {"-"}:  # the separator py-spy prints between --subprocesses dumps
            thread = None
            continue
        thread = None
        _skip(out, n, "not py-spy dump output")
    return out


def _skip(out: PySpyParse, line: int | None, why: str) -> None:
    out.skipped += 1
    if out.first_line is None:
        out.first_line = line
    if len(out.problems) < 5:
        out.problems.append(f"line {line}: {why}" if line else why)


def parse_json(text: str) -> PySpyParse:
    """`py-spy dump --json` output: one JSON array of thread traces per dump, several arrays concatenated."""
    out = PySpyParse(dumps=[], json=True)
    decoder = json.JSONDecoder()
    pos, size = 0, len(text)
    while pos < size:
        while pos < size and text[pos] in " \t\r\n":
            pos += 1
        if pos >= size:
            break
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            _skip(out, exc.lineno, f"not valid JSON from here on ({exc.msg}); the rest is skipped")
            break
        pos = end
        if isinstance(value, dict):
            value = [value]
        if not isinstance(value, list):
            _skip(out, _line_at(text, pos), "a JSON value that is not a list of thread traces")
            continue
        by_pid: dict[int | None, ProcessDump] = {}
        for trace in value:
            thread = _json_thread(trace)
            if thread is None:
                _skip(out, _line_at(text, pos), "a JSON trace without frames")
                continue
            pid = _json_int(trace.get("pid"))  # type: ignore[union-attr]
            dump = by_pid.get(pid)
            if dump is None:
                info = trace.get("process_info")  # type: ignore[union-attr]
                info = info if isinstance(info, dict) else {}
                parent = info.get("parent")
                command = info.get("command_line")
                dump = ProcessDump(pid, command if isinstance(command, str) else "", None,
                                   _json_int(parent.get("pid")) if isinstance(parent, dict) else None, _line_at(text, pos))
                by_pid[pid] = dump
                out.dumps.append(dump)
            dump.threads.append(thread)
    return out


def _line_at(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _json_int(value: object) -> int | None:
    """A pid, line or thread id as py-spy writes it (a JSON integer); anything else (a list, a float) is none."""
    return value if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 1 << 63 else None


def _json_thread(trace: object) -> ThreadStack | None:
    if not isinstance(trace, dict) or not isinstance(trace.get("frames"), list):
        return None
    frames: list[Frame] = []
    for f in trace["frames"]:
        if not isinstance(f, dict) or not isinstance(f.get("name"), str):
            continue
        file = f.get("short_filename") or f.get("filename")
        file = file if isinstance(file, str) else "?"
        name = f["name"]
        native = f.get("module") is not None or _is_native(file) or name.startswith("0x")
        frames.append(Frame(name, file, _json_int(f.get("line")) or 0, native))
    active, gil = trace.get("active", True) is not False, trace.get("owns_gil", False) is True
    status = "idle" if not active else ("active+gil" if gil else "active")
    tid = next((t for t in (trace.get("os_thread_id"), trace.get("thread_id")) if isinstance(t, (int, str)) and t), None)
    name = trace.get("thread_name")
    return ThreadStack(str(tid) if tid is not None else "?", status, name if isinstance(name, str) else None, frames)


def parse_dump(text: str, cache: dict[str, Frame] | None = None, file: str = "<py-spy dump>") -> PySpyParse:
    """Text or JSON, told apart by the first character. Raises only `FileError` (naming `file`): odd parts are
    skipped and counted, and a file that cannot be read at all (JSON nested past the parser's depth) is named."""
    with file_errors(file, EXPECTED):
        head = text.lstrip()[:1]
        if head in ("[", "{"):
            return parse_json(text)
        return parse_text(text, cache)


__all__ = ["Frame", "ProcessDump", "PySpyParse", "ThreadStack", "parse_dump", "parse_frame_line", "parse_json",
           "parse_text"]
