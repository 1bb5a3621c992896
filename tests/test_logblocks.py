"""The fast scan's block helpers against plain per-line Python: each line's shape and its first line, the lines
holding 0x, and the progress checks' window tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from diagagent.analysis.logblocks import WINDOW, BlockShapes, no_jump, no_slowdown
from diagagent.analysis.templates import shape_of
from diagagent.telemetry.readers import LineBlock


def _lines(seed: int) -> list[bytes]:
    """Lines of a few shapes, some with 0x literals, some with a digit before an x that is no literal (2x)."""
    rng = np.random.default_rng(seed)
    kinds = [b"iteration %d | loss %d.%d", b"frame #%d: 0x%dfa (in lib%d.so)", b"speedup %dx over %d", b"plain line",
             b"", b"addr 0x%d0x%d", b"%d%d%d"]
    out = []
    for _ in range(400):
        kind = kinds[int(rng.integers(len(kinds)))]
        out.append(kind % tuple(int(rng.integers(1000)) for _ in range(kind.count(b"%d"))))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_block_shapes_are_the_per_line_shapes(seed: int) -> None:
    lines = _lines(seed)
    block = LineBlock(b"\n".join(lines))
    shapes = BlockShapes(block)
    hexed = set(shapes.hex_rows.tolist())
    assert hexed == {i for i, raw in enumerate(lines) if b"0x" in raw}
    for i, raw in enumerate(lines):  # the per-line shape, but for the 0x lines (their hex letters fold too)
        if i not in hexed:
            assert shapes.values[shapes.index[i]] == shape_of(raw)
    firsts = shapes.first_rows()
    assert len(firsts) == len(shapes.values)
    assert [int(np.flatnonzero(shapes.index == j)[0]) for j in range(len(shapes.values))] == firsts.tolist()


def _jumps(history: list[float], values: list[float], factor: float) -> bool:
    """Whether logscan._jump's first test passes on any value (the value is past factor x the recent least)."""
    recent = list(history)
    for v in values:
        if len(recent) >= 3 and v > factor * min(recent):
            return True
        recent = (recent + [v])[-WINDOW:]
    return False


def _slows(recent: list[float], steps: list[float], ratio: float, least: int) -> bool:
    """Whether logscan._slowdown's first tests pass on any step: past ratio x the window's mean, or (a full window)
    past ratio x its older half's mean."""
    window = list(recent)
    for s in steps:
        if len(window) >= least and s > ratio * sum(window) / len(window):
            return True
        half = window[:WINDOW // 2]
        if len(window) == WINDOW and s > ratio * sum(half) / len(half):
            return True
        window = (window + [s])[-WINDOW:]
    return False


@pytest.mark.parametrize("seed", range(20))
def test_the_window_checks_are_the_per_line_checks(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(20):
        history = rng.uniform(1, 2, int(rng.integers(0, WINDOW + 1))).tolist()
        values = rng.uniform(1, 2, int(rng.integers(1, 60)))
        if rng.random() < 0.5:  # a spike somewhere
            values[int(rng.integers(len(values)))] *= float(rng.choice([1.2, 1.4, 6.0, 12.0]))
        assert no_jump(history, values, 5.0) == (not _jumps(history, values.tolist(), 5.0))
        assert no_slowdown(history, values, 1.3, 5) == (not _slows(history, values.tolist(), 1.3, 5))


@pytest.mark.parametrize(("block", "next_block"), [(64, 16), (4096, 64), (1 << 20, 1 << 20)])
def test_smaller_reads_after_the_first_give_the_same_lines(tmp_path: Path, block: int, next_block: int) -> None:
    from diagagent.telemetry.readers import LineChunks

    lines = [b"x" * (i % 97) + b" %d" % i for i in range(2000)]
    path = tmp_path / "rank-0.log"
    path.write_bytes(b"\n".join(lines) + b"\n")
    for blocks in (False, True):
        chunks = LineChunks(path, path.name, [], block=block, blocks=blocks, next_block=next_block)
        got = [line for _, part in chunks for line in (part.lines() if isinstance(part, LineBlock) else part)]
        assert got == lines and chunks.lines == len(lines)


@pytest.mark.parametrize("seed", range(20))
def test_the_window_checks_at_once_are_the_per_line_checks(seed: int) -> None:
    """Values close together (the checks pass at once, on the least of all), and around zero."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        low = float(rng.choice([1.0, -1.0, 0.0, 1e-300]))
        history = rng.uniform(low, low + 0.25, int(rng.integers(0, WINDOW + 1))).tolist()
        values = rng.uniform(low, low + 0.25, int(rng.integers(1, 60)))
        if rng.random() < 0.5:
            values[int(rng.integers(len(values)))] *= float(rng.choice([1.1, 1.3, 1.31, 6.0]))
        assert no_jump(history, values, 5.0) == (not _jumps(history, values.tolist(), 5.0))
        assert no_slowdown(history, values, 1.3, 5) == (not _slows(history, values.tolist(), 1.3, 5))
