"""Raw logs in: inferring hosts and ranks from a 1 GiB interleaved `srun -l` log, against reading the same bundle.

Writes the log (24 ranks on 3 hosts, NCCL init naming each host, Megatron progress, one rank's error), then times
`bundle_from_logs` on it (read, route every line, write per-rank files) and one pass of `Bundle.iter_all_log_lines`
over the bundle laid out per host that it built (what every analyzer's pass costs at least). The issue asks for a
ratio (raw throughput / bundle read throughput) of at least 0.6. The process's peak RSS is given too.

    python benches/raw_logs.py [--mib 1024] [--gzip] [--json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

from diagagent.telemetry import Bundle
from diagagent.telemetry.rawlogs import bundle_from_logs

HOSTS = ("gpu-a01", "gpu-a02", "gpu-a03")
RANKS = 24


def write_log(path: Path, mib: int, compress: bool) -> int:
    """An interleaved srun -l log of about `mib` MiB; returns its (uncompressed) size."""
    opener = gzip.open if compress else open
    head = "".join(f"{r:2d}: {HOSTS[r // 8]}:{7000 + r}:{7100 + r} [{r % 8}] NCCL INFO Bootstrap : Using "
                   f"ib0:10.1.0.{r // 8}<0>\n" for r in range(RANKS))
    size, it = 0, 0
    with opener(path, "wt", encoding="utf-8") as f:
        f.write(head)
        size += len(head)
        while size < mib << 20:
            block = []
            for _ in range(200):
                it += 1
                for r in range(RANKS):
                    block.append(f"{r:2d}: [2026-11-20 08:{it // 60 % 60:02d}:{it % 60:02d},{r:03d}] [INFO] [megatron] "
                                 f" iteration {it:8d}/ 1000000 | consumed samples: {it * 512:12d} | elapsed time per "
                                 f"iteration (ms): 4{r:03d}.5 | lm loss: 2.{it % 997:03d}E+00 | grad norm: 0.9{r:02d} |\n")
            text = "".join(block)
            f.write(text)
            size += len(text)
        tail = "13: RuntimeError: CUDA error: uncorrectable ECC error encountered\n" \
               "srun: error: gpu-a02: task 13: Exited with exit code 1\n"
        f.write(tail)
    return size + len(tail)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=1024, help="size of the raw log (MiB)")
    ap.add_argument("--gzip", action="store_true", help="the raw log gzip-compressed")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="diagagent-bench-raw-"))
    try:
        src = tmp / ("slurm-4242.out.gz" if args.gzip else "slurm-4242.out")
        size = write_log(src, args.mib, args.gzip)
        t0 = time.perf_counter()
        root = bundle_from_logs([src], tmp / "bundle")
        build_s = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10  # the whole process, generation included
        with Bundle.open(root) as b:
            t0 = time.perf_counter()
            lines = sum(1 for _ in b.iter_all_log_lines())
            read_s = time.perf_counter() - t0
            hosts, files = len(b.job.nodes), len(b.log_files)
            notes = [str(i) for i in b.issues if i.kind == "inferred"]
        result = {"raw_mib": round(size / 2**20), "gzip": args.gzip, "lines": lines, "hosts": hosts,
                  "files": files, "build_s": round(build_s, 2), "read_s": round(read_s, 2),
                  "build_mib_s": round(size / 2**20 / build_s, 1), "read_mib_s": round(size / 2**20 / read_s, 1),
                  "ratio": round(read_s / build_s, 2), "peak_rss_mib": round(peak / 2**20, 1), "note": notes[0]}
        if args.json:
            print(json.dumps(result, indent=2))
        else:
            for k, v in result.items():
                print(f"{k:>15}: {v}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
