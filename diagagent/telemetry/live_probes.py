"""Live probes: run the read-only health commands of `tools/probes.yaml` on a host and collect their output.

Commands come from the manifest only; the host is validated and passed as one argv element (no shell here).
"""

from __future__ import annotations

import os
import re
import selectors
import subprocess
import time
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, field_validator

HOSTNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")
# ssh joins its command into a string for the remote shell: no element may carry shell syntax
_SHELL_META = re.compile(r"[\s;|&$`<>\\'\"(){}*?!#~\[\]]")
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class ProbeError(ValueError):
    """A manifest, host or probe name that cannot be used; nothing was run."""


def _safe_argv(argv: list[str], allow_host: bool) -> list[str]:
    for element in argv:
        plain = element.replace("{host}", "") if allow_host else element
        if "{" in plain or "}" in plain:
            raise ValueError(f"argv element {element!r}: the only placeholder is {{host}}, and only in a transport")
        if _SHELL_META.search(plain) or not element:
            raise ValueError(f"argv element {element!r} holds whitespace or shell syntax; "
                             "write each word as its own element, without quoting or pipes")
    return argv


class Transport(BaseModel):
    description: str = ""
    argv: list[str] = Field(default_factory=list)

    @field_validator("argv")
    @classmethod
    def _check(cls, v: list[str]) -> list[str]:
        return _safe_argv(v, allow_host=True)

    def render(self, host: str) -> list[str]:
        return [a.replace("{host}", host) for a in self.argv]


class ProbeSpec(BaseModel):
    description: str = ""
    argv: list[str] = Field(min_length=1)
    timeout_s: float = Field(60.0, gt=0, le=3600)
    max_bytes: int = Field(4 << 20, gt=0, le=256 << 20)
    save_as: str
    default: bool = True

    @field_validator("argv")
    @classmethod
    def _check(cls, v: list[str]) -> list[str]:
        return _safe_argv(v, allow_host=False)

    @field_validator("save_as")
    @classmethod
    def _file_name(cls, v: str) -> str:
        if not _FILE_NAME.match(v):
            raise ValueError(f"save_as {v!r} must be a plain file name (letters, digits, . _ -)")
        return v


class ProbeManifest(BaseModel):
    version: int = 1
    default_transport: str = "local"
    transports: dict[str, Transport]
    probes: dict[str, ProbeSpec]

    @classmethod
    def load(cls, path: Path) -> ProbeManifest:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise ProbeError(f"{path}: cannot read the probe manifest: {exc}") from exc
        try:
            manifest = cls.model_validate(data)
        except ValueError as exc:
            raise ProbeError(f"{path}: not a valid probe manifest: {exc}") from exc
        if manifest.default_transport not in manifest.transports:
            raise ProbeError(f"{path}: default_transport {manifest.default_transport!r} is not a declared transport")
        return manifest

    def select(self, names: list[str] | None) -> list[str]:
        """The probes to run: the named ones (each must exist), else the manifest's defaults."""
        if not names:
            return [n for n, p in self.probes.items() if p.default]
        unknown = [n for n in names if n not in self.probes]
        if unknown:
            raise ProbeError(f"unknown probe(s) {', '.join(unknown)}; the manifest has {', '.join(self.probes)}")
        return list(dict.fromkeys(names))


class ProbeRun(BaseModel):
    """One probe run on one host: what ran, how it ended, and its output (cut at the probe's max_bytes)."""

    host: str
    probe: str
    transport: str
    argv: list[str]
    exit_code: int | None = None
    timed_out: bool = False
    truncated: bool = False
    seconds: float = 0.0
    bytes: int = 0
    error: str | None = None  # could not start (not installed, permission), or stopped early
    stderr: str = ""  # its last few KB
    output: str = Field("", exclude=True)  # kept out of JSON dumps; saved to the bundle instead
    saved_to: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_code == 0 and not self.timed_out


def check_host(host: str) -> str:
    if not HOSTNAME.match(host):
        raise ProbeError(f"{host!r} is not a host name (letters, digits, '.', '_', '-'; not starting with '-')")
    return host


def run_probe(host: str, name: str, manifest: ProbeManifest, transport: str | None = None) -> ProbeRun:
    """Run one manifest probe on `host` through a manifest transport, with its timeout and output limit."""
    check_host(host)
    transport = transport or manifest.default_transport
    if transport not in manifest.transports:
        raise ProbeError(f"unknown transport {transport!r}; the manifest has {', '.join(manifest.transports)}")
    if name not in manifest.probes:
        raise ProbeError(f"unknown probe {name!r}; the manifest has {', '.join(manifest.probes)}")
    spec = manifest.probes[name]
    argv = manifest.transports[transport].render(host) + list(spec.argv)
    run = ProbeRun(host=host, probe=name, transport=transport, argv=argv)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "LC_ALL": "C"})
    except OSError as exc:
        run.error = f"cannot start {argv[0]}: {exc.strerror or exc}"
        return run
    out, err = _collect(proc, spec.timeout_s, spec.max_bytes, run)
    run.seconds = round(time.monotonic() - start, 3)
    run.output = out.decode("utf-8", errors="replace")
    run.bytes = len(out)
    run.stderr = err[-4096:].decode("utf-8", errors="replace")
    run.exit_code = proc.returncode
    if run.timed_out:
        run.error = f"timed out after {spec.timeout_s:g} s; stopped"
    elif run.truncated:
        run.error = f"output passed {spec.max_bytes} bytes; cut there and stopped"
    return run


def _collect(proc: subprocess.Popen[bytes], timeout_s: float, max_bytes: int, run: ProbeRun) -> tuple[bytes, bytes]:
    """Read stdout and stderr until the process ends, the deadline passes, or stdout passes `max_bytes`."""
    deadline = time.monotonic() + timeout_s
    out, err = bytearray(), bytearray()
    sel = selectors.DefaultSelector()
    assert proc.stdout is not None and proc.stderr is not None
    sel.register(proc.stdout, selectors.EVENT_READ, out)
    sel.register(proc.stderr, selectors.EVENT_READ, err)
    open_streams = 2
    while open_streams:
        left = deadline - time.monotonic()
        if left <= 0:
            run.timed_out = True
            break
        for key, _ in sel.select(timeout=min(left, 0.5)):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            buf: bytearray = key.data
            if buf is err:
                buf.extend(chunk)
                del buf[:-65536]
            else:
                buf.extend(chunk[: max(0, max_bytes - len(buf))])
                if len(buf) >= max_bytes:
                    run.truncated = True
        if run.truncated:
            break
    sel.close()
    if run.timed_out or run.truncated:
        proc.kill()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for stream in (proc.stdout, proc.stderr):
        stream.close()
    return bytes(out), bytes(err)


def save_run(run: ProbeRun, bundle_dir: Path, manifest: ProbeManifest) -> Path:
    """Write a run's output to `<bundle>/probes/<host>/<save_as>` (BUNDLE.md's names) and return the path."""
    if not bundle_dir.exists():
        raise ProbeError(f"{bundle_dir}: no such folder; probe output is saved into an existing bundle directory")
    if not bundle_dir.is_dir():
        raise ProbeError(f"{bundle_dir}: not a folder (a tarball cannot be written to); give a bundle directory")
    target = bundle_dir / "probes" / check_host(run.host) / manifest.probes[run.probe].save_as
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(run.output, encoding="utf-8")
    run.saved_to = str(target)
    return target


__all__ = ["HOSTNAME", "ProbeError", "ProbeManifest", "ProbeRun", "ProbeSpec", "Transport", "check_host",
           "run_probe", "save_run"]
