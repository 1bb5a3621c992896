"""JSON-lines log records read as the plain lines they stand for: each documented format's keys, a traceback held in
one record, the interpreter's own stderr between records, and the whole diagnosis on a shipper's file."""

from __future__ import annotations

import json
from pathlib import Path

from diagagent.config import Settings
from diagagent.diagnosis import diagnose
from diagagent.telemetry import Bundle
from diagagent.telemetry.readers import iter_raw_lines
from diagagent.telemetry.records import render_record, sniff_records
from tests import test_logs_fixtures as fx

TRACEBACK = ('Traceback (most recent call last):\n  File "/app/train.py", line 88, in <module>\n    dist.barrier()\n'
             "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:2046, unhandled system error\n")


def _line(record: dict) -> str:
    return render_record(json.dumps(record).encode()).decode()


def test_each_documented_record_format_gives_time_level_and_message() -> None:
    # Docker's json-file driver (the message keeps its newline)
    assert _line({"log": "Epoch 3: loss=nan\n", "stream": "stderr", "time": "2026-11-20T08:02:10.123456789Z"}) \
        == "2026-11-20T08:02:10.123456789Z Epoch 3: loss=nan"
    # python-json-logger, with a rank field
    assert _line({"asctime": "2026-11-20 08:02:10,123", "levelname": "warn", "rank": 3, "message": "slow step"}) \
        == "2026-11-20 08:02:10,123 WARNING [rank3]: slow step"
    # zap (Kubeflow's training operator): epoch seconds, and the error beside the message
    assert _line({"level": "error", "ts": 1763625730.5, "msg": "failed to create pod", "error": "quota exceeded"}) \
        == "2025-11-20T08:02:10.500Z ERROR failed to create pod: quota exceeded"
    # journalctl -o json: a syslog priority and microseconds
    assert _line({"MESSAGE": "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.", "PRIORITY": "3",
                  "__REALTIME_TIMESTAMP": "1763625730000000"}) \
        == "2025-11-20T08:02:10.000Z ERROR NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."
    # Cloud Logging's structured payload
    assert _line({"jsonPayload": {"message": "CUDA out of memory."}, "severity": "ERROR",
                  "timestamp": "2026-11-20T08:02:10Z"}) == "2026-11-20T08:02:10Z ERROR CUDA out of memory."


def test_a_record_holding_a_traceback_gives_the_exception_that_ends_it() -> None:
    assert _line({"level": "ERROR", "message": TRACEBACK}).endswith("ERROR torch.distributed.DistBackendError: NCCL "
                                                                    "error in: ProcessGroupNCCL.cpp:2046, unhandled "
                                                                    "system error")
    chained = TRACEBACK + "\nThe above exception was the direct cause of the following exception:\n\n" \
        + TRACEBACK.replace("torch.distributed.DistBackendError: NCCL error in", "RuntimeError: barrier failed at")
    assert _line({"message": chained}).startswith("RuntimeError: barrier failed at")
    # python-json-logger puts the traceback beside the message
    assert _line({"message": "step failed", "exc_info": TRACEBACK}).startswith("torch.distributed.DistBackendError")
    # a multi-line message without one gives its first line
    assert _line({"message": "Starting elastic_operator with launch configs:\n  entrypoint : train.py"}) \
        == "Starting elastic_operator with launch configs:"


def test_a_traceback_shipped_one_line_per_record_keeps_its_shape_and_is_cited_by_its_exception(tmp_path: Path) -> None:
    # Cloud Logging makes each stderr line an entry of its own, all of severity ERROR: a frame's source line is code,
    # not an error; the exception that ends the traceback is the cause
    pieces = TRACEBACK.splitlines()
    records = [json.dumps({"jsonPayload": {"message": text}, "severity": "ERROR",
                           "timestamp": f"2026-11-24T00:58:22.92{n}Z"}) for n, text in enumerate(pieces)]
    assert _line(json.loads(records[2])) == "2026-11-24T00:58:22.922Z     dist.barrier()"
    path = fx.write(tmp_path / "b", {"logs/node-0/cloud-logging.jsonl.log": "\n".join(records) + "\n"},
                    'job_id: "9"\nframework: other\nstatus: failed\nnodes:\n  - {host: node-0}\n')
    with Bundle.open(path) as bundle:
        d = diagnose(bundle, Settings(state_dir=tmp_path / "state"))
    causes = [e for e in d.evidence if e.role == "cause"]
    assert causes and causes[0].line == 4 and "unhandled system error" in causes[0].text
    assert all("dist.barrier()" not in e.text for e in causes)


def test_lines_that_are_no_record_come_back_as_they_were() -> None:
    for raw in (b"{'loss': 2.31, 'learning_rate': 1e-05, 'epoch': 0.1}",  # HF Trainer's dict: no JSON
                b'{"loss": 2.31, "step": 10}',  # JSON without a message
                b'{"message": "cut off', b"plain line", b"[1, 2]"):
        assert render_record(raw) == raw
    assert not sniff_records(b"{'loss': 2.31}\n" * 10 + b'{"loss": 2.3}\n')
    assert sniff_records(b"starting\n" + json.dumps({"msg": "x"}).encode() + b"\n")


def test_a_record_file_is_read_line_for_line_with_the_interpreters_stderr_between(tmp_path: Path) -> None:
    path = tmp_path / "pod.jsonl"
    records = [{"time": "2026-11-20T08:00:00Z", "level": "INFO", "message": "step 10 loss 2.1"}, "",
               "Fatal Python error: Segmentation fault",  # the interpreter's own stderr, no record
               {"time": "2026-11-20T08:00:05Z", "level": "ERROR", "message": TRACEBACK}]
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    lines = dict(iter_raw_lines(path, "pod.jsonl", []))
    assert lines[1] == "2026-11-20T08:00:00Z INFO step 10 loss 2.1"
    assert lines[3] == "Fatal Python error: Segmentation fault"
    assert lines[4].startswith("2026-11-20T08:00:05Z ERROR torch.distributed.DistBackendError: NCCL error")


def test_a_shippers_record_file_is_diagnosed_with_its_own_line_numbers(tmp_path: Path) -> None:
    def record(second: int, level: str, message: str) -> str:
        return json.dumps({"ts": f"2026-11-20T08:02:{second:02d}.000Z", "level": level, "rank": 0, "message": message})

    lines = [record(1, "INFO", "init_process_group(backend='nccl') done, world_size=16"),
             record(2, "INFO", "iteration 120/1000 | lm loss: 2.31 | elapsed time per iteration (ms): 812.0"),
             record(3, "WARN", "node-0:900:1100 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2 with "
                               "error 12, opcode 0, len 0, vendor err 129 (Recv)"),
             record(4, "ERROR", TRACEBACK)]
    job = 'job_id: "9"\nframework: other\nstatus: failed\nnodes:\n  - {host: node-0}\n'
    with Bundle.open(fx.write(tmp_path / "b", {"logs/node-0/pod.jsonl": "\n".join(lines) + "\n"}, job)) as bundle:
        d = diagnose(bundle, Settings(state_dir=tmp_path / "state"))
    cited = {e.line: e for e in d.evidence}
    assert 4 in cited and cited[4].text.startswith("2026-11-20T08:02:04.000Z ERROR [rank0]: torch.distributed")
    assert d.stage == "training" and d.iteration == 121


def test_a_kernel_journal_exported_as_json_is_read_as_the_nodes_dmesg(tmp_path: Path) -> None:
    """`journalctl -k -o json > probes/<host>/journal-k.json`: JSON-lines, not the one JSON document of a structured
    probe; its records are the kernel's lines."""
    def kernel(us: int, priority: str, message: str) -> str:
        return json.dumps({"__REALTIME_TIMESTAMP": str(us), "_HOSTNAME": "node-1", "SYSLOG_IDENTIFIER": "kernel",
                           "PRIORITY": priority, "MESSAGE": message})

    journal = [kernel(1795161482000000, "5", "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  565.57.01"),
               kernel(1795163461240000, "3", "Out of memory: Killed process 715 (python) total-vm:291837120kB, "
                                             "anon-rss:231104412kB, file-rss:98304kB, shmem-rss:0kB, UID:0")]
    job = 'job_id: "9"\nframework: other\nstatus: failed\nnodes:\n  - {host: node-0}\n  - {host: node-1}\n'
    files = {"probes/node-1/journal-k.json": "\n".join(journal) + "\n",
             "logs/node-1/torchrun.log": "  exitcode  : -9 (pid: 715)\n",
             "logs/node-0/torchrun.log": "[rank0]: RuntimeError: NCCL communicator was aborted on rank 0.\n"}
    with Bundle.open(fx.write(tmp_path / "b", files, job)) as bundle:
        d = diagnose(bundle, Settings(state_dir=tmp_path / "state"))
        assert not bundle.issues
    assert (d.fault, d.faulty_hosts) == ("host_oom_killed", ["node-1"])
    assert any(e.file == "probes/node-1/journal-k.json" and e.line == 2 for e in d.evidence)
