"""Hostile telemetry files: each attack corrupts ONE file of a clean simulated bundle and returns its path.

Shared by tests/test_hardening_files.py and benches/attack_files.py; the clean bundle is `diagagent.sim`'s.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from pathlib import Path

from diagagent.sim import simulate

BASE_FAULT = "gpu_hang"  # has logs, flows, stacks and probes; the fault names a node and an eviction
HEALTHY_STACK = "stacks/node-001/rank-1.txt"  # a rank of a healthy node, not in the outlier group
HEALTHY_PROBES = "probes/node-002"
FLOWS = "flows/flows.csv.gz"
NESTING = 100_000  # deeper than any JSON parser's recursion limit
HUGE_DIGITS = "9" * 5000  # over Python's 4300-digit int() limit


def make_clean(out: Path, seed: int = 1) -> Path:
    """The clean bundle every attack starts from: a GPU hang on 4 nodes x 2 GPUs, 6 minutes, uncompressed logs."""
    simulate(out, BASE_FAULT, 4, seed, gpus_per_node=2, minutes=6, compress=False)
    return out


def _outside(root: Path, name: str, text: str) -> Path:
    """A file beside the bundle (outside it), for symlinks to point at."""
    target = root.parent / f"outside-{name}"
    target.write_text(text)
    return target


def _symlink(root: Path, rel: str, text: str) -> str:
    path = root / rel
    path.unlink(missing_ok=True)
    os.symlink(_outside(root, path.name, text), path)
    return rel


def _write(root: Path, rel: str, data: str | bytes) -> str:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return rel


def _flow_table(root: Path):  # -> pyarrow.Table
    import pyarrow.csv as pcsv

    return pcsv.read_csv(root / FLOWS)


def _to_parquet(root: Path, table) -> str:  # the CSV file is replaced by a Parquet file of the same records
    import pyarrow.parquet as pq

    (root / FLOWS).unlink()
    pq.write_table(table, root / "flows" / "flows.parquet")
    return "flows/flows.parquet"


# --- stacks ------------------------------------------------------------------------------------------------


def pyspy_json_bad_types(root: Path) -> str:
    return _write(root, HEALTHY_STACK, '[{"pid": [], "thread_id": null, "frames": []}]')


def pyspy_json_nested(root: Path) -> str:
    return _write(root, HEALTHY_STACK, "[" * NESTING + "]" * NESTING)


def stack_symlink(root: Path) -> str:
    return _symlink(root, HEALTHY_STACK, "root:x:0:0:root:/root:/bin/bash\n")


def stack_huge_numbers(root: Path) -> str:
    return _write(root, HEALTHY_STACK, f"Process {HUGE_DIGITS}: python train.py\nPython v3.11.7\n\n"
                                       f'Thread {HUGE_DIGITS} (active): "MainThread"\n'
                                       f"    all_reduce (torch/distributed/distributed_c10d.py:{HUGE_DIGITS})\n"
                                       f"Parent Process {HUGE_DIGITS}: x\n")


def stack_binary(root: Path) -> str:
    return _write(root, HEALTHY_STACK, bytes(range(256)) * 64 + b"\x00" * 4096)


def pyspy_json_odd_values(root: Path) -> str:
    trace = {"pid": 1e400, "thread_id": {"a": 1}, "os_thread_id": [1], "thread_name": ["x"], "active": "no",
             "owns_gil": [], "process_info": {"command_line": {"x": 1}, "parent": {"pid": []}},
             "frames": [{"name": {"n": 1}, "filename": 7, "line": 10 ** 30, "module": []}, 5, None]}
    return _write(root, HEALTHY_STACK, json.dumps([trace, trace, []]).replace("Infinity", "1e400"))


# --- probes ------------------------------------------------------------------------------------------------


def probe_json_nested(root: Path) -> str:
    return _write(root, f"{HEALTHY_PROBES}/custom.json", "{\"a\": " * NESTING + "1" + "}" * NESTING)


def probe_symlink(root: Path) -> str:
    return _symlink(root, f"{HEALTHY_PROBES}/dmesg.txt", "[1.0] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off\n")


def probe_json_bad_types(root: Path) -> str:
    return _write(root, f"{HEALTHY_PROBES}/custom.json",
                  '{"probe": [], "status": {"x": 1}, "detail": null, "metrics": {"a": 1e400, "b": [1], "c": -1e400}}')


def probe_huge_numbers(root: Path) -> str:
    rel = f"{HEALTHY_PROBES}/nvidia-smi.txt"
    lines = (root / rel).read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("Attached GPUs"))
    lines[at] = f"Attached GPUs                             : {HUGE_DIGITS}"
    return _write(root, rel, "\n".join(lines))


def probe_binary(root: Path) -> str:
    return _write(root, f"{HEALTHY_PROBES}/ibstat.txt", bytes(range(256)) * 64)


# --- flows -------------------------------------------------------------------------------------------------


def flows_bad_cell(root: Path) -> str:
    lines = gzip.decompress((root / FLOWS).read_bytes()).decode().split("\n")
    head = lines[0].split(",")
    cells = lines[len(lines) // 2].split(",")
    cells[head.index("bytes")] = "abc"
    lines[len(lines) // 2] = ",".join(cells)
    return _write(root, FLOWS, gzip.compress("\n".join(lines).encode()))


def flows_parquet_ns_utc(root: Path) -> str:
    import pyarrow as pa
    import pyarrow.compute as pc

    table = _flow_table(root)
    for name in ("start", "end"):
        ns = pc.cast(pc.multiply(table[name], 1e9), pa.int64())
        table = table.set_column(table.schema.get_field_index(name), name,
                                 pc.cast(ns, pa.timestamp("ns", tz="UTC")))
    return _to_parquet(root, table)


def flows_parquet_wrong_types(root: Path) -> str:
    import pyarrow as pa

    table = _flow_table(root)
    wrong = pa.array([[int(b)] for b in table["bytes"].to_pylist()], type=pa.list_(pa.int64()))
    table = table.set_column(table.schema.get_field_index("bytes"), "bytes", wrong)
    return _to_parquet(root, table)


def flows_parquet_string_numbers(root: Path) -> str:
    import pyarrow as pa
    import pyarrow.compute as pc

    table = _flow_table(root)
    for name in ("start", "bytes"):
        table = table.set_column(table.schema.get_field_index(name), name, pc.cast(table[name], pa.string()))
    return _to_parquet(root, table)


def _job_ips(root: Path) -> set[str]:
    import yaml

    return {str(n["ip"]) for n in yaml.safe_load((root / "job.yaml").read_text())["nodes"] if n.get("ip")}


def flows_absurd_values(root: Path) -> str:
    lines = gzip.decompress((root / FLOWS).read_bytes()).decode().split("\n")
    head = lines[0].split(",")
    ips = _job_ips(root)
    cells = next(c for line in lines[1:] if (c := line.split(","))[head.index("src_ip")] in ips)
    row = dict(zip(head, cells, strict=True))
    extra = []
    for start, end, nbytes in (("-1e308", "1e308", "1"), ("1e300", "1e300", "1e308"), ("nan", "inf", "-inf")):
        extra.append(",".join({**row, "start": start, "end": end, "bytes": nbytes}[h] for h in head))
    lines[1:1] = extra
    return _write(root, FLOWS, gzip.compress("\n".join(lines).encode()))


def flows_not_parquet(root: Path) -> str:
    return _write(root, "flows/extra.parquet", b"PAR1" + os.urandom(2048))


def job_huge_rank(root: Path) -> str:
    text = (root / "job.yaml").read_text()
    return _write(root, "job.yaml", text.replace("ranks: [0, 1]", f"ranks: [0, 1, {2 ** 70}]", 1))


# --- logs --------------------------------------------------------------------------------------------------


def log_symlink(root: Path) -> str:
    return _symlink(root, "logs/node-002/rank-3.log", "root:x:0:0:root:/root:/bin/bash\n")


# name -> (attack, what it leaves): "skip" (a file or records are skipped and named) or "read" (valid input that
# must be read whole: nothing to name)
ATTACKS: dict[str, tuple[Callable[[Path], str], str]] = {
    "py-spy JSON with a list pid": (pyspy_json_bad_types, "skip"),
    "py-spy JSON nested 100k deep": (pyspy_json_nested, "skip"),
    "py-spy JSON odd value types": (pyspy_json_odd_values, "skip"),
    "stack file symlinked outside": (stack_symlink, "skip"),
    "stack with 5000-digit numbers": (stack_huge_numbers, "skip"),
    "stack file of binary bytes": (stack_binary, "skip"),
    "JSON probe nested 100k deep": (probe_json_nested, "skip"),
    "JSON probe with odd types": (probe_json_bad_types, "skip"),
    "probe symlinked outside": (probe_symlink, "skip"),
    "nvidia-smi with 5000-digit counts": (probe_huge_numbers, "skip"),
    "ibstat of binary bytes": (probe_binary, "skip"),
    "flow CSV with one bytes=abc": (flows_bad_cell, "skip"),
    "flow CSV with absurd values": (flows_absurd_values, "skip"),
    "flow Parquet timestamp[ns, UTC]": (flows_parquet_ns_utc, "read"),
    "flow Parquet bytes as list<int>": (flows_parquet_wrong_types, "skip"),
    "flow Parquet numbers as strings": (flows_parquet_string_numbers, "read"),
    "flow .parquet of random bytes": (flows_not_parquet, "skip"),
    "job.yaml rank 2**70": (job_huge_rank, "skip"),
    "log file symlinked outside": (log_symlink, "skip"),
}
