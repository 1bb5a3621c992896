"""Fuzzing the py-spy, stack, probe and flow parsers with hostile text (hypothesis, bounded examples): nothing
escapes but the documented `FileError`, and that error, like every read problem recorded, names the file.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagagent.analysis import probes
from diagagent.analysis.pyspy import parse_dump
from diagagent.analysis.stacks import analyze_stacks
from diagagent.analysis.xid import load_xid_catalog
from diagagent.telemetry import Bundle, FileError
from diagagent.telemetry.readers import iter_flow_batches
from tests.stack_bundles import GRAD_SYNC, make_stack_bundle

FUZZ = settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=12, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
FILE = "stacks/node-000/rank-3.txt"

digits = st.text("0123456789", min_size=1, max_size=5000)  # past int()'s 4300-digit limit too
number = st.one_of(digits, st.integers(-10**20, 10**20).map(str), st.floats().map(str), st.sampled_from(
    ["nan", "inf", "-inf", "1e400", "-1e308", "0x1f", "", " 12 ", "1.2.3", "abc"]))
word = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
json_value = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | word,
                          lambda inner: st.lists(inner, max_size=4) | st.dictionaries(word, inner, max_size=4),
                          max_leaves=20)


def _lines(templates: list[str]) -> st.SearchStrategy[str]:
    line = st.tuples(st.sampled_from(templates), number, word, number).map(lambda t: t[0].format(n=t[1], w=t[2],
                                                                                                m=t[3]))
    return st.lists(line | word, max_size=30).map("\n".join)


def _nested(depth: int, opener: str = "[") -> str:
    closer = {"[": "]", "{\"a\": ": "}"}[opener]
    return opener * depth + ("1" if opener != "[" else "") + closer * depth


PYSPY_LINES = ["Process {n}: {w}", "Parent Process {n}: {w}", "Python v{n} ({w})", 'Thread {n} (idle): "{w}"',
               "Thread 0x{n} (active+gil): \"MainThread\"", "    {w} ({w}:{n})", "    {w} ({w})", "        {w} = {m}",
               "-----", "    0x{n} ({w}.so:{m})"]
trace = st.fixed_dictionaries({}, optional={
    "pid": json_value, "thread_id": json_value, "os_thread_id": json_value, "thread_name": json_value,
    "active": json_value, "owns_gil": json_value, "process_info": json_value,
    "frames": st.lists(st.fixed_dictionaries({}, optional={"name": json_value, "filename": json_value,
                                                           "short_filename": json_value, "line": json_value,
                                                           "module": json_value}) | json_value, max_size=5)})
pyspy_json = st.lists(trace | json_value, max_size=4).map(json.dumps)


@FUZZ
@given(st.one_of(_lines(PYSPY_LINES), pyspy_json, st.integers(0, 3000).map(_nested), st.binary().map(
    lambda b: b.decode("utf-8", "replace"))))
def test_pyspy_raises_nothing_but_a_file_error_naming_the_file(text: str) -> None:
    try:
        parsed = parse_dump(text, file=FILE)
    except FileError as exc:
        assert exc.file == FILE and exc.message
    else:
        assert parsed.skipped >= 0 and all(isinstance(t.thread_id, str) for d in parsed.dumps for t in d.threads)


@FEW
@given(st.one_of(_lines(PYSPY_LINES), pyspy_json, st.integers(900, 3000).map(_nested)))
def test_stacks_skip_and_name_a_hostile_file_and_keep_the_others(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = make_stack_bundle(Path(tmp) / "b", 2, 2, 2, 1, 2, lambda r, _: GRAD_SYNC)
        (root / FILE).write_text(text)
        with Bundle.open(root) as bundle:
            f = analyze_stacks(bundle)
            assert all(issue.file == FILE for issue in bundle.issues)
        assert f.present and {0, 1, 2} <= {r for c in f.clusters for r in c.ranks}  # the other files still count
        if f.unusable_files:  # a rank whose file is unusable is of unknown state, not one without a dump
            assert f.unknown_ranks == [3] and 3 not in f.fr_summary.ranks_without_dump  # type: ignore[union-attr]


PROBE_LINES = ["Attached GPUs : {n}", "    DRAM Uncorrectable : {n}", "GPU 00000000:{m}:00.0", "    Volatile",
               "        GPU Current Temp : {n} C", "[{m}] NVRM: Xid (PCI:0000:{w}): {n}, {w}",
               "[{m}] SXid (PCI:{w}): {n}, Fatal", "| {w} | Fail - GPU: {n} |", "|---- {w} ----+",
               "CA '{w}'", "\tPort {n}:", "\t\tState: {w}", "\t\tRate: {n}", "# Port counters: Lid {n} port {m}",
               "link {w}/{n} state {w} physical_state {w} netdev {w}",
               "SymbolErrorCounter:.......{n}", "symbol_error: {n}", "#  Avg bus bandwidth    : {n}",
               "# Out of bounds values : {n} OK", "#  size  count  type  redop  root  time  algbw  busbw #wrong",
               "  {n}  {m}  float  sum  -1  {n}  {m}  {n}  {m}", "Out of memory: Killed process {n} ({w})"]


@FUZZ
@given(st.sampled_from(["nvidia-smi", "dcgm-diag", "dmesg", "nccl-tests", "ibstat", "rdma-link", "ib-counters",
                        "limits", "json"]),
       st.one_of(_lines(PROBE_LINES), json_value.map(json.dumps), st.fixed_dictionaries(
           {"status": json_value, "probe": json_value, "detail": json_value, "metrics": json_value}).map(json.dumps),
           st.integers(0, 3000).map(lambda d: _nested(d, "{\"a\": "))))
def test_probe_parsers_raise_nothing_but_a_file_error_naming_the_file(kind: str, text: str) -> None:
    file = f"probes/node-001/{kind}.txt"
    parse = {"nvidia-smi": probes.parse_nvidia_smi, "dcgm-diag": probes.parse_dcgm_diag,
             "nccl-tests": probes.parse_nccl_tests, "ibstat": probes.parse_ibstat,
             "rdma-link": probes.parse_rdma_link, "ib-counters": probes.parse_perfquery,
             "limits": probes.parse_limits}.get(kind)
    try:
        if kind == "dmesg":
            probes.parse_dmesg(text, file, load_xid_catalog())
        elif kind == "json":
            probes.parse_json_probe(text, file, "custom")
        else:
            parse(text, file)  # type: ignore[misc]
    except FileError as exc:
        assert exc.file == file and exc.message


FLOW_HEADERS = ["start,end,src_ip,dst_ip,bytes", "start,end,src_ip,dst_ip,src_port,dst_port,bytes,packets",
                "end,start,bytes,dst_ip,src_ip,extra", "start,end,src_ip,bytes", "\ufeffstart,end,src_ip,dst_ip,bytes"]
flow_cell = number | st.sampled_from(["2026-11-20T08:00:01Z", "2026-13-45T99:99:99Z", "10.0.0.1", '"a,b"', '"'])


@FUZZ
@given(st.sampled_from(FLOW_HEADERS), st.lists(st.lists(flow_cell, min_size=3, max_size=9).map(",".join),
                                               max_size=20))
def test_the_flow_csv_reader_never_raises_and_names_the_file_in_every_problem(header: str, rows: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.csv"
        path.write_text("\n".join([header, *rows]) + "\n")
        issues: list = []
        got = sum(b.num_rows for b in iter_flow_batches(path, "flows/f.csv", issues))
    assert got <= len(rows) and all(issue.file == "flows/f.csv" for issue in issues)


@FEW
@given(st.dictionaries(st.sampled_from(["start", "end", "src_ip", "dst_ip", "bytes", "packets"]),
                       st.sampled_from(["int64", "float64", "string", "timestamp_ns_utc", "timestamp_s", "date32",
                                        "bool", "list", "struct", "binary", "dictionary", "null"]), min_size=5),
       st.integers(0, 5))
def test_the_flow_parquet_reader_never_raises_and_names_the_file_in_every_problem(types: dict[str, str],
                                                                                 rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    def column(kind: str) -> pa.Array:
        ints = [1_795_161_600 + i for i in range(rows)]
        return {"int64": lambda: pa.array(ints), "float64": lambda: pa.array([float(i) for i in ints]),
                "string": lambda: pa.array([str(i) if i % 2 else "x" for i in ints]),
                "timestamp_ns_utc": lambda: pa.array([i * 10**9 + 7 for i in ints], pa.timestamp("ns", tz="UTC")),
                "timestamp_s": lambda: pa.array(ints, pa.timestamp("s")),
                "date32": lambda: pa.array([20_000] * rows, pa.date32()),
                "bool": lambda: pa.array([True] * rows), "list": lambda: pa.array([[i] for i in ints]),
                "struct": lambda: pa.array([{"a": i} for i in ints]), "binary": lambda: pa.array([b"\xff"] * rows),
                "dictionary": lambda: pa.array(["10.0.0.1"] * rows).dictionary_encode(),
                "null": lambda: pa.nulls(rows)}[kind]()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.parquet"
        pq.write_table(pa.table({name: column(kind) for name, kind in types.items()}), path)
        issues: list = []
        got = sum(b.num_rows for b in iter_flow_batches(path, "flows/f.parquet", issues))
    assert got <= rows and all(issue.file == "flows/f.parquet" for issue in issues)
