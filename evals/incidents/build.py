"""Writes the hand-made multi-node incidents (evals/incidents/*.tgz) from the writers beside this file, each
bundle packed the same way every run (sorted members, no times), so a rebuild changes only what a writer changed.

Run `python evals/incidents/build.py` after editing a writer; the committed tarballs are what the eval reads.
"""

from __future__ import annotations

import gzip
import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# a writer is a script, or a folder whose build.py runs the modules beside it
WRITERS = ["write_hardware_network.py", "write_hardware_network_2.py", "write_infra_user_data.py",
           "write_user_infra_2.py", "write_mixed.py", "write_mixed_2.py", "write_mixed_3.py", "write_mixed_4",
           "write_mixed_5", "write_mixed_6", "write_mixed_7", "write_mixed_8",
           "write_mixed_9", "write_mixed_10"]


def pack(bundle: Path, out: Path) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(p for p in bundle.rglob("*") if p.is_file()):
            info = tarfile.TarInfo(f"{bundle.name}/{path.relative_to(bundle).as_posix()}")
            data = path.read_bytes()
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    with out.open("wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw.getvalue())


def main(out: Path = HERE) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for writer in WRITERS:
            work = Path(tmp) / writer.removesuffix(".py")
            if (HERE / writer).is_dir():
                shutil.copytree(HERE / writer, work)
            else:
                work.mkdir()
                shutil.copy(HERE / writer, work / "build.py")
            subprocess.run([sys.executable, "-B", str(work / "build.py")], check=True, stdout=subprocess.DEVNULL)
            for bundle in sorted(p for p in work.iterdir() if (p / "job.yaml").is_file()):
                pack(bundle, out / f"{bundle.name}.tgz")
                print(f"{bundle.name}.tgz")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
