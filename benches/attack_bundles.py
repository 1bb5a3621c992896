"""Bench: hostile bundles (bad job.yaml, compression bombs, cut files, big tarballs, links out) against `diagnose`.

Crafts each input from examples/job-42 in a temp dir, diagnoses it in a child process, and prints a table:
input -> crashed?, seconds, peak RSS, whether the notes (or the error) name the file, same fault as the clean bundle.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
EXAMPLE = ROOT / "examples" / "job-42"
MiB = 1 << 20


def child(bundle: str, state_dir: str, limits: str) -> None:
    """Run in a fresh process: open and diagnose; print the outcome as JSON (a refused bundle is an outcome)."""
    from diagagent.config import Settings
    from diagagent.diagnosis import diagnose
    from diagagent.telemetry import Bundle, BundleError

    settings = Settings.load(state_dir=Path(state_dir), jobs_dir=Path(state_dir) / "jobs",
                             **({"limits": json.loads(limits)} if limits else {}))
    out: dict = {}
    try:
        limits_of = getattr(settings, "limits", None)  # (absent before the budgets: run on an older checkout too)
        with (Bundle.open(bundle, limits_of) if limits_of is not None else Bundle.open(bundle)) as b:
            d = diagnose(b, settings)
            out = {"fault": d.fault, "hosts": d.faulty_hosts[:3], "notes": d.notes,
                   "evidence": [e.file for e in d.evidence if e.file]}
    except BundleError as exc:
        out = {"refused": str(exc)}
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(out))


# --- the inputs: each writes its bundle under `tmp` and returns (path, the file it attacks, limits JSON) -------


def _copy(tmp: Path, name: str) -> Path:
    dest = tmp / name
    shutil.copytree(EXAMPLE, dest, symlinks=True)
    return dest


def _job_yaml(tmp: Path, name: str, edit: Callable[[str], str]) -> tuple[Path, str, str]:
    b = _copy(tmp, name)
    (b / "job.yaml").write_text(edit((b / "job.yaml").read_text()))
    return b, "job.yaml", ""


def _gz_stream(path: Path, piece: bytes, total: int, level: int = 9) -> None:
    """A gzip file holding `piece` repeated to `total` bytes, written without holding it in memory."""
    comp = zlib.compressobj(level, zlib.DEFLATED, 31)
    chunk = piece * (MiB // len(piece))
    with path.open("wb") as f:
        for _ in range(total // len(chunk)):
            f.write(comp.compress(chunk))
        f.write(comp.flush())


def clean(tmp: Path) -> tuple[Path, str, str]:
    return _copy(tmp, "clean"), "", ""


def truncated_gz(tmp: Path) -> tuple[Path, str, str]:
    b = _copy(tmp, "truncated-gz")
    log = b / "logs" / "node-013" / "rank-59.log"
    text = log.read_bytes() + b"".join(b"[rank59] filler line %d after the error\n" % i for i in range(20000))
    data = gzip.compress(text, mtime=0)
    (log.parent / "rank-59.log.gz").write_bytes(data[: len(data) * 6 // 10])
    log.unlink()
    return b, "rank-59.log.gz", ""


def bad_date(tmp: Path) -> tuple[Path, str, str]:
    return _job_yaml(tmp, "bad-date", lambda t: t.replace("started_at: 2026-11-19T15:17:12Z",
                                                          "started_at: 2026-13-45T00:00:00Z"))


def deep_nesting(tmp: Path) -> tuple[Path, str, str]:
    return _job_yaml(tmp, "deep-nesting", lambda t: t + "extra: " + "[" * 50_000 + "]" * 50_000 + "\n")


def alias_bomb(tmp: Path) -> tuple[Path, str, str]:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return _job_yaml(tmp, "alias-bomb", lambda t: t + "\n".join(lines) + "\n")


def huge_int(tmp: Path) -> tuple[Path, str, str]:
    return _job_yaml(tmp, "5000-digit-int", lambda t: t.replace("exit_code: 1", "exit_code: " + "9" * 5000))


def recursive_anchor(tmp: Path) -> tuple[Path, str, str]:
    return _job_yaml(tmp, "recursive-anchor", lambda t: t + "loop: &loop [*loop]\n")


def gpus_huge(tmp: Path) -> tuple[Path, str, str]:
    def edit(t: str) -> str:
        t = t.replace("gpus_per_node: 8", "gpus_per_node: 10000000")
        return "\n".join(ln.split(", ranks:")[0] + "}" if "ranks:" in ln else ln for ln in t.splitlines()) + "\n"

    return _job_yaml(tmp, "gpus-10M", edit)


def tp_huge(tmp: Path) -> tuple[Path, str, str]:
    return _job_yaml(tmp, "tp-1e12", lambda t: t.replace("tp: 4,", "tp: 1000000000000,"))


def gpus_mismatch(tmp: Path) -> tuple[Path, str, str]:
    return _job_yaml(tmp, "gpus-vs-ranks", lambda t: t.replace("gpus_per_node: 8", "gpus_per_node: 16"))


def big_yaml(tmp: Path) -> tuple[Path, str, str]:
    return _job_yaml(tmp, "job-yaml-8MiB", lambda t: t + "padding: " + "x" * (8 * MiB) + "\n")


def newline_bomb(tmp: Path) -> tuple[Path, str, str]:
    b = _copy(tmp, "newline-bomb")
    _gz_stream(b / "logs" / "node-005" / "rank-9.log.gz", b"\n", 1024 * MiB)
    return b, "rank-9.log.gz", ""


def newline_bomb_no_ratio(tmp: Path) -> tuple[Path, str, str]:
    b = _copy(tmp, "newline-bomb-ratio-off")
    _gz_stream(b / "logs" / "node-005" / "rank-9.log.gz", b"\n", 1024 * MiB)
    return b, "", json.dumps({"max_ratio": 1e9})  # every one of the 1G blank lines is read


def zstd_bomb(tmp: Path) -> tuple[Path, str, str]:
    import zstandard

    b = _copy(tmp, "zstd-bomb")
    comp = zstandard.ZstdCompressor(level=19)
    with (b / "logs" / "node-005" / "rank-10.log.zst").open("wb") as f, comp.stream_writer(f) as w:
        zero = b"x" * MiB
        for _ in range(4096):  # 4 GiB of one letter, no newline
            w.write(zero)
    return b, "rank-10.log.zst", ""


def long_line(tmp: Path) -> tuple[Path, str, str]:
    b = _copy(tmp, "one-1GiB-line")
    _gz_stream(b / "logs" / "node-005" / "rank-11.log.gz", b"y", 1024 * MiB, level=1)
    return b, "", json.dumps({"max_ratio": 1e9})


def tar_over_cap(tmp: Path) -> tuple[Path, str, str]:
    b = _copy(tmp, "tar-src")
    _gz_stream(b / "logs" / "node-005" / "zeros.log", b"\0", 256 * MiB, level=1)  # gz bytes under a plain name
    with gzip.open(b / "logs" / "node-005" / "zeros.log", "rb") as f, (b / "big.bin").open("wb") as out:
        shutil.copyfileobj(f, out)
    (b / "logs" / "node-005" / "zeros.log").unlink()
    dest = tmp / "tar-over-cap.tar.gz"
    with tarfile.open(dest, "w:gz", compresslevel=1) as tar:
        tar.add(b, arcname="job-42")
    shutil.rmtree(b)
    return dest, "tar-over-cap.tar.gz", json.dumps({"tar_bytes": 64 * MiB})


def tar_links(tmp: Path) -> tuple[Path, str, str]:
    b = _copy(tmp, "tar-links-src")
    os.symlink("/etc/passwd", b / "logs" / "node-005" / "passwd.log")
    dest = tmp / "tar-links.tar.gz"
    with tarfile.open(dest, "w:gz") as tar:
        tar.add(b, arcname="job-42")
    shutil.rmtree(b)
    return dest, "passwd.log", ""


def symlink_out(tmp: Path) -> tuple[Path, str, str]:
    b = _copy(tmp, "symlink-out")
    outside = tmp / "outside.log"
    outside.write_text("[2026-11-19 15:40:00] node-005 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, "
                       "GPU has fallen off the bus.\n" * 3)
    os.symlink(outside, b / "logs" / "node-005" / "xid.log")
    return b, "xid.log", ""


def folder_link_out(tmp: Path) -> tuple[Path, str, str]:
    b = _copy(tmp, "folder-link-out")
    outside = tmp / "outside-probes"
    shutil.copytree(EXAMPLE / "probes", outside)
    shutil.rmtree(b / "probes")
    os.symlink(outside, b / "probes")
    return b, "probes", ""


ATTACKS: list[Callable[[Path], tuple[Path, str, str]]] = [
    clean, truncated_gz, bad_date, deep_nesting, alias_bomb, huge_int, recursive_anchor, gpus_huge, tp_huge,
    gpus_mismatch, big_yaml, newline_bomb, newline_bomb_no_ratio, zstd_bomb, long_line, tar_over_cap, tar_links,
    symlink_out, folder_link_out,
]


def run(path: Path, limits: str, state: Path, timeout: float) -> tuple[dict, float]:
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", str(path), str(state), limits],
                              capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"crash": f"timeout after {timeout:.0f} s"}, time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"crash": last[:100], "peak_rss_mb": rss}, seconds  # (the largest child's so far)
    return json.loads(proc.stdout.strip().splitlines()[-1]), seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per input before it counts as a hang")
    ap.add_argument("--only", nargs="*", help="run these inputs only (names as in the table)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory(prefix="diagagent-attack-") as tmp_name:
        tmp = Path(tmp_name)
        state = tmp / "state"
        clean_fault = None
        print("| input | outcome | crash | seconds | peak RSS MB | names the file | same fault as clean |")
        print("|---|---|---|---:|---:|---|---|")
        for attack in ATTACKS:
            name = attack.__name__
            if args.only and name not in args.only and name != "clean":
                continue
            path, target, limits = attack(tmp)
            out, seconds = run(path, limits, state, args.timeout)
            if name == "clean":
                clean_fault = (out.get("fault"), out.get("hosts", [])[:1])
            said = " ".join(out.get("notes", [])) + out.get("refused", "")
            if "refused" in out:
                outcome = "refused: " + out["refused"].split("/")[-1][:90]
            elif "crash" in out:
                outcome = "-"
            else:
                hits = [n for n in out.get("notes", []) if target and target in n]
                outcome = f"{out.get('fault')} on {','.join(out.get('hosts', [])[:1]) or '-'}" + (
                    f"; note: {hits[0][:110]}" if hits else "")
            same = "-" if "refused" in out or "crash" in out else (
                "yes" if (out.get("fault"), out.get("hosts", [])[:1]) == clean_fault else "NO")
            names = "-" if not target else ("yes" if target in said else "NO")
            label = name + (f" (limits {limits})" if limits else "")
            print(f"| {label} | {outcome} | {out.get('crash', 'no')} | {seconds:.1f} | "
                  f"{out.get('peak_rss_mb', 0):.0f} | {names} | {same} |", flush=True)
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
