"""Writing a collected job in the bundle layout (BUNDLE.md): job.yaml, logs/<host>/, probes/<host>/, stacks/<host>/.

The bundle is built in a temporary sibling folder and moved into place at the end, so no reader sees half of one.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import IO, Any, Self

import yaml

from diagagent.telemetry.collect.runner import CollectError
from diagagent.telemetry.collect.slurm_layout import srun_error_tasks

# `srun -l` puts the task id before each line, right-aligned to the widest id: " 7: text", "12: text"
SRUN_LABEL = re.compile(rb"^ *(\d{1,7}): ")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_OPEN = 128  # per-rank files held open at once while splitting one output file


def safe_name(text: str, fallback: str = "unknown") -> str:
    """A path component from cluster-supplied text (a host, pod or container name): no separators, no dot-dot."""
    name = _SAFE.sub("_", text).strip("._")[:200]
    return name or fallback


class BundleWriter:
    """A bundle being collected into `dest`: write its parts, then `commit()` (or `discard()`). As a context manager
    it commits when the block ends and discards when it raises."""

    def __init__(self, dest: Path) -> None:
        self.dest = Path(dest)
        if self.dest.exists() and not _replaceable(self.dest):
            raise CollectError(f"{self.dest}: exists and is not an earlier collected bundle; give a new folder (-o)")
        self.dest.parent.mkdir(parents=True, exist_ok=True)
        self.root = Path(tempfile.mkdtemp(prefix=f".{self.dest.name}.", dir=self.dest.parent))
        self.notes: list[str] = []
        self.files: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)

    def _file(self, part: str, host: str, name: str) -> Path:
        path = self.root / part / safe_name(host) / safe_name(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.files.append(str(path.relative_to(self.root)))
        return path

    def copy_log(self, src: Path, host: str, name: str) -> Path:
        """The file as it is (gzip stays gzip), streamed."""
        target = self._file("logs", host, name)
        with src.open("rb") as fin, target.open("wb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
        return target

    def write_log(self, host: str, name: str, text: str) -> Path:
        target = self._file("logs", host, name)
        target.write_text(text, encoding="utf-8")
        return target

    def split_tasks(self, src: Path, host_of_task: dict[int, str], default_host: str, suffix: str = ".log") -> dict:
        """Split an `srun -l` output file into `logs/<host>/rank-<task>.log` (label removed), streaming; lines
        without a label (the batch script's own, srun's errors) go to `logs/<default_host>/batch.log`.
        Returns counts of labelled and unlabelled lines, `tasks` (task -> the host its lines went under),
        `unplaced` (tasks the layout did not know) and `srun_errors` (task -> the node srun's own error lines name)."""
        handles: OrderedDict[Path, IO[bytes]] = OrderedDict()
        counts = {"labelled": 0, "unlabelled": 0, "tasks": {}, "unplaced": set(), "srun_errors": {}}

        def out(path: Path) -> IO[bytes]:
            f = handles.pop(path, None)
            if f is None:
                if len(handles) >= MAX_OPEN:
                    handles.popitem(last=False)[1].close()
                if path.exists():
                    f = path.open("ab")
                else:
                    f = self._file("logs", path.parent.name, path.name).open("ab")
            handles[path] = f
            return f

        try:
            with src.open("rb") as fin:
                for raw in fin:
                    m = SRUN_LABEL.match(raw)
                    if m is None:
                        counts["unlabelled"] += 1
                        if raw.startswith(b"srun: error: ") and (said := srun_error_tasks(raw)):
                            counts["srun_errors"].update(dict.fromkeys(said[1], said[0]))
                        out(self.root / "logs" / safe_name(default_host) / f"batch{suffix}").write(raw)
                        continue
                    task = int(m.group(1))
                    host = host_of_task.get(task)
                    if host is None and len(set(host_of_task.values())) <= 1:
                        host = default_host  # a single-node job: every task ran there, whatever srun -n said
                    if host is None:
                        counts["unplaced"].add(task)
                        host = default_host
                    counts["labelled"] += 1
                    counts["tasks"][task] = host
                    out(self.root / "logs" / safe_name(host) / f"rank-{task}{suffix}").write(raw[m.end():])
        finally:
            for f in handles.values():
                f.close()
        return {**counts, "unplaced": sorted(counts["unplaced"])}

    def move_logs(self, old_host: str, new_host: str, prefix: str) -> int:
        """Move logs/<old_host>/<prefix>* to logs/<new_host>/ (a task's files, once its node is known); how many."""
        src, dest = self.root / "logs" / safe_name(old_host), self.root / "logs" / safe_name(new_host)
        moved = 0
        for path in sorted(src.glob(f"{prefix}*")) if src.is_dir() else []:
            dest.mkdir(parents=True, exist_ok=True)
            path.rename(dest / path.name)
            old_rel, new_rel = str(path.relative_to(self.root)), str((dest / path.name).relative_to(self.root))
            self.files = [new_rel if f == old_rel else f for f in self.files]
            moved += 1
        if src.is_dir() and not any(src.iterdir()):
            src.rmdir()
        return moved

    def append_stack(self, host: str, rank: int, dump: str) -> Path:
        """A py-spy dump of one rank, appended to stacks/<host>/rank-<N>.txt (several dumps of a rank may follow
        each other there, BUNDLE.md)."""
        target = self.root / "stacks" / safe_name(host) / f"rank-{rank}.txt"
        if not target.exists():
            target = self._file("stacks", host, f"rank-{rank}.txt")
        with target.open("a", encoding="utf-8") as f:
            f.write(dump if dump.endswith("\n") else dump + "\n")
        return target

    def write_probe_json(self, host: str, name: str, data: dict[str, Any]) -> Path:
        target = self._file("probes", host, f"{name}.json")
        target.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
        return target

    def write_raw(self, rel: str, data: bytes) -> Path:
        """A record of what the cluster said (scontrol text, kubectl JSON) under `collected/`, for a human to read."""
        target = self.root / "collected" / safe_name(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return target

    def write_job(self, job: dict[str, Any]) -> None:
        if self.notes:
            job = {**job, "collected_notes": list(self.notes)}
        text = yaml.safe_dump(job, sort_keys=False, allow_unicode=True, width=1000)
        (self.root / "job.yaml").write_text(text, encoding="utf-8")

    def commit(self) -> Path:
        """Move the finished bundle to `dest`, replacing an earlier collection of the same job."""
        old = None
        if self.dest.exists():
            old = self.dest.with_name(f".{self.dest.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            self.dest.rename(old)
        self.root.rename(self.dest)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return self.dest

    def discard(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def _replaceable(dest: Path) -> bool:
    """An empty folder, or one this module wrote before (its job.yaml says `collected_from:`)."""
    if not dest.is_dir():
        return False
    if not any(dest.iterdir()):
        return True
    try:
        head = (dest / "job.yaml").read_text(encoding="utf-8", errors="replace")[:1 << 20]
    except OSError:
        return False
    return re.search(r"^collected_from: ", head, re.MULTILINE) is not None


__all__ = ["SRUN_LABEL", "BundleWriter", "safe_name"]
