"""Adds one real case to the corpus: a pasted log and an annotation in, a bundle with truth.json out.

`python evals/real/add_case.py ANNOTATION.yaml [--split dev|test] [--force]`; see evals/real/README.md.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
MAX_CASE_BYTES = 512 * 1024
CATEGORIES = {"hardware", "network", "infrastructure", "framework", "user_code", "data"}
STAGES = {"init", "training", "checkpoint", "eval", "shutdown"}
CONFIDENCE = {"high", "medium", "low"}
ROLES = {"cause", "context"}
STATUSES = {"failed", "hung", "slow"}
JOB_FRAMEWORKS = {"megatron", "deepspeed", "fsdp", "torchtitan", "nemo"}
PARTS = ("logs", "probes", "stacks")  # bundle folders a pasted text can go to (BUNDLE.md)
REQUIRED = ("id", "source", "framework", "confidence", "note", "logs", "indicating")
_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


class CaseError(ValueError):
    """An annotation that cannot become a case: the message names the key and what was expected."""


def _reserved(url: str) -> bool:
    """The shared reserved-source check (../shared/tools/reserved_source.py), or an error if it cannot be found."""
    for parent in HERE.parents:
        tool = parent / "shared" / "tools" / "reserved_source.py"
        if tool.is_file():
            spec = importlib.util.spec_from_file_location("reserved_source", tool)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module.reserved(url)
    raise CaseError("cannot find shared/tools/reserved_source.py beside the checkout: the source cannot be checked")


def _read_log(entry: dict, base: Path, n: int) -> str:
    if ("text" in entry) == ("path" in entry):
        raise CaseError(f"logs[{n}]: give exactly one of text (the paste) or path (a file holding it)")
    if "text" in entry:
        return str(entry["text"])
    path = (base / entry["path"]).expanduser()
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise CaseError(f"logs[{n}]: cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise CaseError(f"logs[{n}]: {path} is not UTF-8 at byte {exc.start}") from exc


def _split_by_host(lines: list[str], pattern: str, default_host: str, n: int) -> dict[str, list[str]]:
    """Route each line, kept whole, to the host its prefix names; a line without a prefix follows the one before."""
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise CaseError(f"logs[{n}].split: not a regular expression: {exc}") from exc
    if "host" not in regex.groupindex:
        raise CaseError(f"logs[{n}].split: the pattern needs a (?P<host>...) group")
    out: dict[str, list[str]] = {}
    host = default_host
    for line in lines:
        m = regex.search(line)
        if m:
            host = re.sub(r"[^A-Za-z0-9_.-]", "-", m.group("host")).strip("-.") or default_host
        out.setdefault(host, []).append(line)
    return out


def build_files(note: dict, base: Path) -> dict[str, list[str]]:
    """Bundle-relative path -> its lines, exactly as pasted (no line is edited, joined or completed)."""
    files: dict[str, list[str]] = {}
    for n, entry in enumerate(note["logs"]):
        if not isinstance(entry, dict):
            raise CaseError(f"logs[{n}]: expected a mapping with host, name and text or path")
        host = str(entry.get("host", "node-0"))
        name = str(entry.get("name", "stdout.log"))
        kind = str(entry.get("dir", "logs"))
        if kind not in PARTS:
            raise CaseError(f"logs[{n}].dir: expected one of {PARTS} (the bundle part), got {kind!r}")
        if not _HOST.match(host) or "/" in name or name.startswith("."):
            raise CaseError(f"logs[{n}]: host {host!r} or name {name!r} is not a plain folder / file name")
        text = _read_log(entry, base, n).replace("\r\n", "\n")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        routed = _split_by_host(lines, entry["split"], host, n) if entry.get("split") else {host: lines}
        for h, part in routed.items():
            files.setdefault(f"{kind}/{h}/{name}", []).extend(part)
    return files


def locate(files: dict[str, list[str]], spec: dict, n: int) -> dict:
    """The file and 1-based line of an indicating line given by its exact text (whole line or a substring)."""
    text = spec.get("text")
    if not isinstance(text, str) or not text.strip():
        raise CaseError(f"indicating[{n}]: expected text, the line (or a part of it) exactly as in the log")
    role = spec.get("role", "cause")
    if role not in ROLES:
        raise CaseError(f"indicating[{n}].role: expected one of {sorted(ROLES)}, got {role!r}")
    wanted_file = spec.get("file")
    hits = [(f, i + 1) for f, lines in files.items() if wanted_file in (None, f)
            for i, line in enumerate(lines) if text in line]
    exact = [(f, i) for f, i in hits if files[f][i - 1] == text]
    hits = exact or hits
    occurrence = int(spec.get("occurrence", 1))
    if not hits:
        raise CaseError(f"indicating[{n}]: {text!r} is not in the log verbatim")
    if len(hits) > 1 and "occurrence" not in spec:
        where = ", ".join(f"{f}:{i}" for f, i in hits[:5])
        raise CaseError(f"indicating[{n}]: {text!r} is on {len(hits)} lines ({where}): "
                        "add occurrence: N (1-based) or file:, or quote more of the line")
    if not 1 <= occurrence <= len(hits):
        raise CaseError(f"indicating[{n}].occurrence: expected 1..{len(hits)}, got {occurrence}")
    file, line = hits[occurrence - 1]
    return {"file": file, "line": line, "role": role, "text": files[file][line - 1]}


def _check(note: dict) -> None:
    missing = [k for k in REQUIRED if note.get(k) in (None, "", [])]
    if missing:
        raise CaseError(f"missing keys: {', '.join(missing)}")
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]{2,80}", str(note["id"])):
        raise CaseError(f"id: expected lower-case letters, digits, '.', '_' or '-', got {note['id']!r}")
    checks = (("category", CATEGORIES), ("stage", STAGES))
    for key, allowed in checks:
        if note.get(key) is not None and note[key] not in allowed:
            raise CaseError(f"{key}: expected one of {sorted(allowed)} or null, got {note[key]!r}")
    if note["confidence"] not in CONFIDENCE:
        raise CaseError(f"confidence: expected one of {sorted(CONFIDENCE)}, got {note['confidence']!r}")
    if note.get("status", "failed") not in STATUSES:
        raise CaseError(f"status: expected one of {sorted(STATUSES)}, got {note['status']!r}")
    if not str(note["source"]).startswith("https://"):
        raise CaseError(f"source: expected the public https:// address, got {note['source']!r}")
    if not 1 <= len(note["indicating"]) <= 5:
        raise CaseError(f"indicating: expected 1 to 5 lines, got {len(note['indicating'])}")


def job_yaml(note: dict, hosts: list[str]) -> str:
    """A minimal job.yaml: what an SRE knows before looking at the logs (id, framework, status, hosts)."""
    framework = str(note["framework"]).lower()
    job = {"job_id": note["id"], "name": note["id"],
           "framework": framework if framework in JOB_FRAMEWORKS else "other",
           "status": note.get("status", "failed"),
           "nodes": [{"host": h} for h in hosts]}
    if note.get("gpus_per_node"):
        job["gpus_per_node"] = int(note["gpus_per_node"])
    return yaml.safe_dump(job, sort_keys=False)


def truth_json(note: dict, indicating: list[dict]) -> dict:
    keys = ("source", "framework", "category", "fault", "root_cause", "stage", "iteration", "faulty_ranks",
            "faulty_nodes", "confidence", "note", "actions")
    truth = {k: note.get(k) for k in keys}
    truth["indicating_lines"] = indicating
    truth["source_sha256"] = hashlib.sha256(str(note["source"]).encode()).hexdigest()[:16]
    return truth


def add_case(annotation: Path, split: str = "dev", root: Path = HERE, force: bool = False) -> Path:
    """Write `<root>/<split>/<id>/` from an annotation file; returns the case folder."""
    try:
        note = yaml.safe_load(annotation.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise CaseError(f"{annotation}: cannot read the annotation: {exc}") from exc
    if not isinstance(note, dict):
        raise CaseError(f"{annotation}: expected a mapping (id, source, framework, ..., logs, indicating)")
    _check(note)
    if _reserved(str(note["source"])):
        raise CaseError(f"source {note['source']} is reserved for an independent evaluation: do not use it")
    files = build_files(note, annotation.parent)
    indicating = [locate(files, spec, n) for n, spec in enumerate(note["indicating"])]
    hosts = list(dict.fromkeys(f.split("/")[1] for f in files))
    for key in ("faulty_nodes",):
        unknown = set(note.get(key) or []) - set(hosts)
        if unknown:
            raise CaseError(f"{key}: {sorted(unknown)} are not log folders ({hosts})")
    folder = root / split / str(note["id"])
    for other in (root / name / str(note["id"]) for name in ("dev", "test")):  # a case id is unique across splits
        if other.exists() and (other != folder or not force):
            raise CaseError(f"{other} exists (use --force to replace a case in the same split)")
    tmp = folder.with_name(folder.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    for rel, lines in files.items():
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    (tmp / "job.yaml").write_text(job_yaml(note, hosts), encoding="utf-8")
    (tmp / "truth.json").write_text(json.dumps(truth_json(note, indicating), indent=2) + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in tmp.rglob("*") if p.is_file())
    if size > MAX_CASE_BYTES:
        shutil.rmtree(tmp)
        raise CaseError(f"{note['id']}: {size} bytes, over the {MAX_CASE_BYTES} limit: keep the relevant part")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("annotation", type=Path, nargs="+")
    parser.add_argument("--split", choices=("dev", "test"), default="dev",
                        help="dev (default); test is frozen: add to it only when the corpus is re-split")
    parser.add_argument("--root", type=Path, default=HERE)
    parser.add_argument("--force", action="store_true", help="replace a case of the same id in the same split")
    args = parser.parse_args(argv)
    failed = 0
    for annotation in args.annotation:
        try:
            folder = add_case(annotation, args.split, args.root, args.force)
            print(f"wrote {folder}")
        except CaseError as exc:
            failed += 1
            print(f"error: {annotation}: {exc}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
