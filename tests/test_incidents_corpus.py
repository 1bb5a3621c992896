"""evals/incidents: the committed tarballs hold what their writers write, file for file and byte for byte, and each
holds a bundle with its truth."""

from __future__ import annotations

import runpy
import tarfile
from pathlib import Path

INCIDENTS = Path(__file__).resolve().parents[1] / "evals" / "incidents"


def _files(tarball: Path) -> dict[str, bytes]:
    with tarfile.open(tarball) as tar:  # (the files, not the gzip stream, which another zlib may write otherwise)
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def test_the_committed_incidents_are_what_the_writers_write(tmp_path: Path) -> None:
    runpy.run_path(str(INCIDENTS / "build.py"))["main"](tmp_path)
    built = {p.name: _files(p) for p in tmp_path.glob("*.tgz")}
    committed = {p.name: _files(p) for p in INCIDENTS.glob("*.tgz")}
    assert built.keys() == committed.keys() and len(built) >= 48
    assert [name for name in built if built[name] != committed[name]] == []


def test_each_incident_holds_its_job_and_truth() -> None:
    for path in INCIDENTS.glob("*.tgz"):
        with tarfile.open(path) as tar:
            names = set(tar.getnames())
        stem = path.name.removesuffix(".tgz")
        assert {f"{stem}/job.yaml", f"{stem}/truth.json"} <= names, path.name
