"""The log scan's compiled passes (diagagent._lines: newlines, line shapes) give exactly what their numpy and pyarrow
fallbacks give, on made-up blocks and on whole scans; and the install built them."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagagent.analysis import logscan
from diagagent.analysis.logblocks import BlockShapes
from diagagent.sim import simulate
from diagagent.telemetry import Bundle
from diagagent.telemetry.readers import LineBlock, compiled_lines, newline_offsets

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted(p for p in (ROOT / "evals" / "cases").iterdir() if (p / "logs").is_dir())

# bytes that matter to a shape: digits (0 stays, 1-9 become 0), the `0x` of a hex literal, hex letters, a newline,
# bytes past ASCII, and words that repeat so that lines share shapes
_PIECES = st.sampled_from([b"0", b"1", b"7", b"9", b"x", b"0x", b"0x1f", b"ab", b"F", b"\n", b"\n\n", b" ", b"\xc3\xa9",
                           b"\xff", b"iteration ", b"loss: ", b"error", b"\t"])
_BODIES = st.lists(_PIECES, max_size=200).map(b"".join)


def _native():
    native = compiled_lines()
    assert native is not None, "diagagent._lines was not built: reinstall (pip install -e .), which compiles it"
    return native


def test_the_install_built_the_compiled_passes() -> None:
    assert _native().__name__ == "diagagent._lines"


@settings(max_examples=300, deadline=None)
@given(_BODIES)
def test_newlines_are_numpy_s(body: bytes) -> None:
    got = newline_offsets(body, _native())
    want = newline_offsets(body)
    assert got.dtype == want.dtype == np.int64
    assert got.tolist() == want.tolist()


def _same_shapes(body: bytes) -> None:
    block = LineBlock(body)
    compiled, fallback = BlockShapes(block, _native()), BlockShapes(block)
    assert compiled.index.dtype == fallback.index.dtype
    assert compiled.index.tolist() == fallback.index.tolist()
    assert compiled.values == fallback.values
    assert compiled.hex_rows.tolist() == fallback.hex_rows.tolist()
    assert compiled.first_rows().tolist() == fallback.first_rows().tolist()


@settings(max_examples=300, deadline=None)
@given(_BODIES)
def test_line_shapes_are_pyarrow_s(body: bytes) -> None:
    _same_shapes(body)


def test_line_shapes_on_long_lines_and_many_shapes() -> None:
    """Long lines, more shapes than the pass's first table holds, and guessed shapes that are wrong."""
    rng = np.random.default_rng(3)
    words = [b"w%d" % i for i in range(3000)]
    lines = [b" ".join(rng.choice(words, 4)) + b" 0x%x" % i for i in range(5000)]
    lines += [b"a1" * 5000, b"a2" * 5000, b"b" * 70000, b"", b"0x"]
    _same_shapes(b"\n".join(lines))
    _same_shapes(b"")
    # the pass first tries the shape that followed the previous line's shape last time: a guess of the same length
    # that differs, a guess that fits, and none
    _same_shapes(b"aa\nab\naa\nac\naa\nab\nab\n17\n00\n1\n2\nabc\naa")


def test_bad_arguments_are_refused_with_what_was_expected() -> None:
    native = _native()
    block = LineBlock(b"one\ntwo")
    index = np.empty(2, np.int32)
    with pytest.raises(ValueError, match=r"line 0 spans 0\.\.8, outside the body"):
        native.shapes(block.body, block.starts, block.ends + 5, index)
    with pytest.raises(TypeError, match="int64"):
        native.shapes(block.body, block.starts.astype(np.int32), block.ends, index)
    with pytest.raises(ValueError, match="same length"):
        native.shapes(block.body, block.starts, block.ends, np.empty(3, np.int32))
    with pytest.raises(ValueError, match="int32 index"):
        native.shapes(block.body, block.starts, block.ends, np.empty(2, np.int64))


def _scan(path: Path, compiled: bool) -> dict:
    with Bundle.open(path) as bundle:
        return dataclasses.asdict(logscan.scan_bundle(bundle, workers=1, fast=True, compiled=compiled))


@pytest.mark.parametrize("case", CASES[::4], ids=lambda p: p.name)
def test_the_compiled_scan_is_the_fallback_s(case: Path) -> None:
    a, b = _scan(case, True), _scan(case, False)
    assert [k for k in a if repr(a[k]) != repr(b[k])] == []  # (repr: NaN is not equal to itself)


def test_the_compiled_scan_is_the_fallback_s_across_many_blocks(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "bundle"
    simulate(out, "nan_loss_divergence", 2, 2, minutes=15, every_rank_logs=True, compress=False)
    monkeypatch.setattr(logscan, "BLOCK_BYTES", 4096)
    native = _native()
    calls = []
    monkeypatch.setattr(native, "shapes", lambda *a, take=native.shapes: calls.append(1) or take(*a))
    a = _scan(out, True)
    assert len(calls) > 50  # the compiled pass read the blocks
    del calls[:]
    b = _scan(out, False)
    assert not calls
    assert [k for k in a if repr(a[k]) != repr(b[k])] == []


_FILES = st.lists(st.sampled_from([b"a", b"bb 12", b"0x7f", b"\n", b"\n\n\n\n", b"x" * 40, b"\r", b"\xff"]),
                  max_size=120).map(b"".join)


@settings(max_examples=150, deadline=None)
@given(data=_FILES, sizes=st.sampled_from([(16, 8), (64, 16), (64, 64), (4096, 1024)]), blocks=st.booleans(),
       file_bytes=st.sampled_from([None, 30, 200, 1000]), file_lines=st.sampled_from([None, 7, 40]))
def test_reading_into_a_handed_buffer_gives_what_plain_reads_give(data: bytes, sizes: tuple[int, int], blocks: bool,
                                                                  file_bytes: int | None, file_lines: int | None,
                                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    """Cut lines, blank runs, a budget stopping mid-block: the same chunks, lines, counts and issues, when a plain
    file is read into one reused buffer (logscan hands each process's files the same one)."""
    from diagagent.telemetry.errors import ReadIssue
    from diagagent.telemetry.limits import ReadBudget, ReadLimits
    from diagagent.telemetry.readers import LineChunks

    path = tmp_path_factory.mktemp("read") / "rank-0.log"
    path.write_bytes(data)
    limits = ReadLimits(**{k: v for k, v in (("file_bytes", file_bytes), ("file_lines", file_lines)) if v})
    block, next_block = sizes
    got = []
    for buffer in (None, bytearray(block), bytearray(b"stale" * block)):  # (a buffer holding an earlier file's bytes)
        issues: list[ReadIssue] = []
        chunks = LineChunks(path, "logs/n/rank-0.log", issues, ReadBudget(limits), max_line=24, block=block,
                            blocks=blocks, next_block=next_block, buffer=buffer)
        read = [(first, part.lines() if isinstance(part, LineBlock) else part) for first, part in chunks]
        got.append((read, chunks.lines, chunks.bytes, chunks.kept, chunks.cut, [repr(i) for i in issues]))
    assert got[1] == got[0] and got[2] == got[0]


@pytest.mark.parametrize("seed", range(6))
def test_progress_fields_read_by_column_are_numpy_s(seed: int) -> None:
    """Several fields a line (mantissas of up to 15 digits, written exponents, signs, a field float() must read), the
    compiled digits and numpy's the same doubles."""
    from diagagent.analysis.logblocks import ShapeColumns, line

    rng = np.random.default_rng(seed)
    forms = ["{:+.6E}", "{:+012.3f}", "{:09.0f}", "{:+09.1f}", "{:+.9f}", "{:+.2e}"]  # (each one width)
    picked = [forms[i] for i in rng.choice(len(forms), 4, replace=False)]
    texts = [" | ".join(f.format(rng.uniform(1e5, 1e6) * rng.choice([-1, 1]) if "09.0f" not in f
                                 else rng.uniform(1e8, 1e9)) for f in picked) for _ in range(300)]
    shape = str.maketrans("123456789", "0" * 9)
    texts = [t for t in texts if t.translate(shape) == texts[0].translate(shape)]  # (the lines of one shape)
    spans, at = [], 0
    for part in texts[0].split(" | "):
        spans.append((at, at + len(part)))
        at += len(part) + 3
    block = LineBlock("\n".join(["x", *texts]).encode())
    rows = np.arange(1, len(texts) + 1)
    reader = ShapeColumns(line(block, 1), spans)
    compiled, fallback = reader.read(block, rows, _native()), reader.read(block, rows)
    assert len(compiled) == len(spans) and len(rows) > 1
    for a, b in zip(compiled, fallback, strict=True):
        assert np.array_equal(a, b) and np.array_equal(np.signbit(a), np.signbit(b))
    with pytest.raises(ValueError, match="outside the body"):
        _native().decimals(block.body, np.array([len(block.body)], np.int64), reader.offsets, reader.counts,
                           np.empty((1, len(reader.counts)), np.int64))


def _sanitizers() -> tuple[Path, Path] | None:
    """gcc's AddressSanitizer and UBSan runtimes, or None where gcc has none."""
    if shutil.which("gcc") is None:
        return None
    asan = Path(subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True,
                               check=False).stdout.strip())
    ubsan = asan.with_name("libubsan.so")
    return (asan, ubsan) if asan.is_file() and ubsan.is_file() else None


_DRIVE = r'''
import importlib.util, sys
import numpy as np
from diagagent.analysis.logblocks import BlockShapes
from diagagent.telemetry.readers import LineBlock, newline_offsets
assert "libasan" in open("/proc/self/maps").read(), "AddressSanitizer is not loaded"
spec = importlib.util.spec_from_file_location("diagagent._lines", sys.argv[1])
native = importlib.util.module_from_spec(spec)
spec.loader.exec_module(native)
rng = np.random.default_rng(7)
pieces = [b"0", b"7", b"0x", b"0x1f", b"ab", b"\n", b"\r", b"\x00", b"\xff", b"\xc3", b"loss: ", b" "]
bodies = [b"", b"\n", b"\n" * 1000, b"x" * 300000, b"0x" * 50000 + b"\n1", bytes(range(256)) * 64]
bodies += [b"".join(rng.choice(pieces, int(rng.integers(1, 3000)))) for _ in range(300)]
bodies += [rng.integers(0, 256, int(rng.integers(1, 20000)), dtype=np.uint8).tobytes() for _ in range(100)]
for body in bodies:
    assert newline_offsets(body, native).tolist() == newline_offsets(body).tolist()
    compiled, fallback = BlockShapes(LineBlock(body), native), BlockShapes(LineBlock(body))
    assert compiled.index.tolist() == fallback.index.tolist() and compiled.values == fallback.values
block = LineBlock(b"one\ntwo")
for starts, ends, index in [(block.starts, block.ends + 5, np.empty(2, np.int32)),
                            (block.starts - 9, block.ends, np.empty(2, np.int32)),
                            (block.starts, block.ends, np.empty(3, np.int32))]:
    try:
        native.shapes(block.body, starts, ends, index)
    except (ValueError, TypeError):
        pass
    else:
        raise AssertionError("a bad argument was not refused")
print("clean")
'''


def test_the_compiled_passes_are_clean_under_address_and_undefined_behaviour_sanitizers(tmp_path: Path) -> None:
    """The passes read untrusted bytes: built with ASan and UBSan, they run hostile bodies (NULs, bytes past ASCII, a
    line of 300 KB, random bytes, bad offsets) to the same results as the fallback, with no report."""
    runtimes = _sanitizers()
    if runtimes is None:
        pytest.skip("needs gcc with AddressSanitizer and UBSan")
    built = tmp_path / f"_lines{sysconfig.get_config_var('EXT_SUFFIX')}"
    subprocess.run(["gcc", "-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                    "-fno-omit-frame-pointer", "-fPIC", "-shared", f"-I{sysconfig.get_paths()['include']}",
                    str(ROOT / "diagagent" / "_lines.c"), "-o", str(built)], check=True, capture_output=True)
    (tmp_path / "drive.py").write_text(_DRIVE)
    env = {**os.environ, "LD_PRELOAD": " ".join(map(str, runtimes)), "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1"}
    done = subprocess.run([sys.executable, str(tmp_path / "drive.py"), str(built)], env=env, capture_output=True,
                          text=True, timeout=600, cwd=ROOT, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "clean", done.stderr[-3000:]
