"""Records a terminal cut at its width are joined back and cited as one record over their lines; tables whose rows
all fill the width, rich's boxes and files that were never cut are left as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagagent.analysis import logscan
from diagagent.analysis.wrapping import unwrap, wrapping_of
from diagagent.config import Settings
from diagagent.diagnosis import diagnose
from diagagent.evaluation.metrics import score_case
from diagagent.telemetry import Bundle
from diagagent.telemetry.truth import LineRef, Truth
from tests import test_logs_fixtures as fx

JOB = 'job_id: "9"\nframework: other\nstatus: failed\nnodes:\n  - {host: node-0}\n'
WATCHDOG = ("[E ProcessGroupNCCL.cpp:915] [Rank 1] NCCL watchdog thread terminated with exception: [Rank 1] Watchdog "
            "caught collective operation timeout: WorkNCCL(SeqNum=778778, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
            "Timeout(ms)=1800000) ran for 1800413 milliseconds before timing out.")
ABORT = "[E ProcessGroupNCCL.cpp:494] To avoid data inconsistency, we are taking the entire process down."


def _screen_copy(records: list[str], width: int = 75) -> list[str]:
    """What a terminal `width` columns wide shows, copied with its padding (as in dev:graphgpt-44)."""
    out = []
    for record in records:
        out += [record[i:i + width].ljust(width) for i in range(0, len(record), width)]
    return out


def test_a_screen_copy_is_joined_back_where_the_terminal_cut_it() -> None:
    terminate = "terminate called after throwing an instance of 'std::runtime_error'"
    lines = [x.encode() for x in _screen_copy([ABORT, WATCHDOG, terminate])]
    wrapping = wrapping_of(lines)
    assert wrapping is not None and wrapping.width == 75 and wrapping.sep == b""
    spans = unwrap(lines, wrapping)
    assert lines[0].decode() == ABORT and lines[1] == b""
    assert lines[2].decode() == WATCHDOG  # mid-word cuts ('coll' / 'ective') closed without a space
    assert spans == {0: 1, 2: 5}
    assert lines[6].startswith(b"terminate called")


def test_rich_wrapped_words_are_joined_with_the_space_it_dropped() -> None:
    # rich prints an exception's message wrapped at the console's width, at spaces (dev:starcoder-77, 71 columns)
    rows = [b"AssertionError: Check batch related parameters. train_batch_size is not",
            b"equal to micro_batch_per_gpu * gradient_acc_step * world_size 64 != 4 *",
            b"8 * 1; and the batch size that the config asked for is larger than this",
            b"can be with this world size"]
    wrapping = wrapping_of(rows)
    assert wrapping is not None and wrapping.sep == b" "
    assert unwrap(rows, wrapping) == {0: 3}
    assert rows[0].endswith(b"is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 64 != 4 * 8 * 1; "
                            b"and the batch size that the config asked for is larger than this can be with this world size")


@pytest.mark.parametrize("rows", [
    # a progress table whose rows all have the same length (dev:nlut-12)
    [f" iter {i}00   time/iter: 0.50  lr: 0.000100 loss_mn: 0.0016 loss_c: 0.5781   loss_s: 2.8997" for i in range(37, 48)],
    # rich's traceback panel, drawn at the width with borders (dev:starcoder-77)
    ["│ ❱  942 │   │   self._batch_assertion()                              │",
     "│    943 │                                                            │",
     "│    944 │   def _do_sanity_check(self):                              │",
     "│    945 │   │   self._do_error_check()                               │"],
    # an ordinary log: lines of every length
    ["INFO starting", "[rank0]: loss 1.0 at step 3 of a run with a long enough line to pass forty columns",
     "Traceback (most recent call last):", '  File "train.py", line 3, in <module>', "RuntimeError: boom"],
])
def test_lines_that_were_not_cut_are_left_alone(rows: list[str]) -> None:
    assert wrapping_of([r.encode() for r in rows]) is None


def test_a_cut_record_is_cited_at_its_first_line_with_its_last_and_scores_for_every_line_it_spans(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logscan, "BLOCK_BYTES", 400)  # the record crosses the reader's block boundaries
    lines = _screen_copy([ABORT, WATCHDOG])
    root = fx.write(tmp_path / "b", {"logs/node-0/stdout.log": "\n".join(lines) + "\n"}, JOB)
    with Bundle.open(root) as bundle:
        d = diagnose(bundle, Settings(state_dir=tmp_path / "state"))
        watchdog = next(e for e in d.evidence if "Watchdog caught collective operation timeout" in e.text)
        assert (watchdog.line, watchdog.end_line) == (3, 6)
        assert d.fault == "nccl_watchdog_timeout"
        file = "logs/node-0/stdout.log"
        truth = Truth(fault="nccl_watchdog_timeout", indicating_lines=[LineRef(file=file, line=3),
                                                                       LineRef(file=file, line=5)])
        scores = score_case(d, truth, bundle)
    assert scores.events.recall_at_5 == 1.0  # line 5 is inside the cited record


@pytest.mark.parametrize("lines", [
    _screen_copy([ABORT, WATCHDOG, "terminate called after throwing"]),
    _screen_copy(["\u00e9t\u00e9 " * 40, WATCHDOG, "\u2502 box " * 30], width=60),  # characters of 2 and 3 bytes
    _screen_copy([ABORT, WATCHDOG]) + ["caf\u00e9 \udcff\udcfe" + "x" * 80],  # bytes that are no UTF-8 (below)
    ["short", "lines only"], [WATCHDOG * 5], [""],
])
def test_the_block_reading_of_the_width_is_the_line_by_line_one(lines: list[str]) -> None:
    from diagagent.analysis.logblocks import block_wrapping
    from diagagent.telemetry.readers import LineBlock

    raw = [x.encode("utf-8", "surrogateescape") for x in lines]
    padded = [x + b"\xff" * (i % 3) + b"\xc3" * (i % 2) for i, x in enumerate(raw)]  # invalid bytes at the width
    for block in (raw, padded):
        assert block_wrapping(LineBlock(b"\n".join(block))) == wrapping_of(block)
