"""Bench: the log scan's floor, the passes its fast path cannot skip, each alone, against the fast scan and
`grep -c error` over the same files in the same run.

Every byte is read, its line ends found, its digits made 0 (bytes.translate: each line's shape) and the shapes hashed
(pyarrow's dictionary_encode), in the scan's 1 MiB blocks; no answer can skip a byte (an error may be on any line).
The same passes compiled (diagagent._lines: newlines, then shapes numbered in one pass) are the floor of the scan as
installed. Prints the CPU seconds and MB/s per core of each pass and of the scan (compiled and numpy), and the ratios
to grep's wall time.
Numbers from a shared machine vary: compare the ratios measured in one run.

    python benches/scan_floor.py BUNDLE [--json]    (a bundle kept by `benches/l4_size.py --keep DIR`, say)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from diagagent.analysis.logscan import COMPILED_BLOCK_BYTES, NEXT_BLOCK_BYTES
from diagagent.analysis.templates import SHAPE_TABLE
from diagagent.telemetry.readers import compiled_lines


def read_only(files: list[str]) -> None:
    """Each file's blocks read and dropped: the read pass alone."""
    for name in files:
        with open(name, "rb") as f:
            while f.read(NEXT_BLOCK_BYTES):
                pass


def passes(files: list[str], upto: str) -> None:
    """Read each file in blocks of whole lines and run the fast path's passes up to `upto` on each."""
    for name in files:
        tail = b""
        with open(name, "rb") as f:
            while data := f.read(NEXT_BLOCK_BYTES):
                last = data.rfind(b"\n")
                if last < 0:
                    tail += data
                    continue
                body, tail = b"".join((tail, memoryview(data)[:last])), data[last + 1:]
                newlines = np.flatnonzero(np.frombuffer(body, np.uint8) == 10)
                if upto == "lines":
                    continue
                shaped = (body + b"\n").translate(SHAPE_TABLE)
                if upto == "shapes":
                    continue
                offsets = np.concatenate(([0], newlines + 1, [len(shaped)])).astype(np.int64)
                pc.dictionary_encode(pa.Array.from_buffers(pa.large_binary(), len(offsets) - 1,
                                                           [None, pa.py_buffer(offsets), pa.py_buffer(shaped)]))


def compiled_passes(files: list[str]) -> None:
    """The compiled floor: each file read into one buffer in blocks of whole lines, its newlines found and its lines'
    shapes numbered by diagagent._lines."""
    native = compiled_lines()
    buffer = bytearray(COMPILED_BLOCK_BYTES)
    with memoryview(buffer) as view:
        for name in files:
            tail = b""
            with open(name, "rb") as f:
                while n := f.readinto(view):
                    last = buffer.rfind(b"\n", 0, n)
                    if last < 0:
                        tail += view[:n]
                        continue
                    body, tail = b"".join((tail, view[:last])), bytes(view[last + 1:n])
                    newlines = np.frombuffer(native.newlines(body), np.int64)
                    starts, ends = np.concatenate(([0], newlines + 1)), np.append(newlines, len(body))
                    native.shapes(body, starts, ends, np.empty(len(starts), np.int32))


def cpu(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--repeat", type=int, default=2, help="best of this many runs of each pass")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from diagagent.analysis import logscan
    from diagagent.telemetry import Bundle

    files = sorted(str(p) for p in (args.bundle / "logs").rglob("*") if p.is_file())
    mb = sum(Path(f).stat().st_size for f in files) / 1e6
    subprocess.run(["cat", *files], stdout=subprocess.DEVNULL, check=False)  # (warms the page cache)
    t0 = time.perf_counter()
    subprocess.run(["grep", "-c", "error", *files], stdout=subprocess.DEVNULL, check=False)
    grep_s = time.perf_counter() - t0

    def scan(compiled: bool) -> None:
        with Bundle.open(args.bundle) as b:
            logscan.scan_bundle(b, workers=1, fast=True, compiled=compiled)

    seconds = {
        "read": cpu(lambda: read_only(files), args.repeat),
        "read+lines": cpu(lambda: passes(files, "lines"), args.repeat),
        "read+lines+shapes": cpu(lambda: passes(files, "shapes"), args.repeat),
        "floor (read+lines+shapes+hash)": cpu(lambda: passes(files, "hash"), args.repeat),
        "fast scan, numpy": cpu(lambda: scan(False), args.repeat),
    }
    if compiled_lines() is not None:
        seconds["compiled floor (read+lines+shapes)"] = cpu(lambda: compiled_passes(files), args.repeat)
        seconds["fast scan, compiled"] = cpu(lambda: scan(True), args.repeat)
    result = {"gb": round(mb / 1e3, 2), "grep_seconds": round(grep_s, 2),
              **{f"{k} cpu_s": round(v, 2) for k, v in seconds.items()},
              **{f"{k} mb_per_s_per_core": round(mb / v) for k, v in seconds.items()},
              **{f"{k} vs grep": round(grep_s / v, 3) for k, v in seconds.items()}}
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:>48}: {v}")


if __name__ == "__main__":
    main()
