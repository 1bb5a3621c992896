"""Running a cluster's own commands (`scontrol`, `sacct`, `kubectl`) for a collector: argv only, a timeout, a cap.

A command that is missing, fails or runs too long raises CollectError with the command and its stderr's last line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


class CollectError(RuntimeError):
    """What could not be collected and why, in words a user can act on."""


@dataclass
class Runner:
    """Runs commands with the caller's environment (kubeconfig, SLURM_CONF) plus `LC_ALL=C`; records each one."""

    timeout_s: float = 60.0
    max_bytes: int = 64 << 20
    env: dict[str, str] | None = None
    ran: list[str] = field(default_factory=list)

    def available(self, program: str) -> bool:
        return shutil.which(program, path=(self.env or os.environ).get("PATH")) is not None

    def run(self, argv: Sequence[str], *, check: bool = True,
            timeout_s: float | None = None) -> subprocess.CompletedProcess[bytes]:
        """Run `argv`; CollectError if it cannot start, times out (`timeout_s`, else the runner's), writes more than
        `max_bytes`, or (with `check`) exits non-zero."""
        argv = [str(a) for a in argv]
        self.ran.append(shown(argv))
        env = {**(self.env if self.env is not None else os.environ), "LC_ALL": "C"}
        timeout_s = timeout_s or self.timeout_s
        try:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s,
                                  env=env, check=False)
        except FileNotFoundError as exc:
            raise CollectError(f"`{argv[0]}` is not installed or not on PATH") from exc
        except subprocess.TimeoutExpired as exc:
            raise CollectError(f"`{self.ran[-1]}` did not finish within {timeout_s:g} s") from exc
        except OSError as exc:
            raise CollectError(f"cannot run `{argv[0]}`: {exc.strerror or exc}") from exc
        if len(proc.stdout) > self.max_bytes:
            raise CollectError(f"`{self.ran[-1]}` wrote more than {self.max_bytes:,} bytes")
        if check and proc.returncode != 0:
            raise CollectError(f"`{self.ran[-1]}` exited with {proc.returncode}: {last_line(proc.stderr)}")
        return proc

    def to_file(self, argv: Sequence[str], path: Path, max_bytes: int) -> tuple[int, int, str]:
        """Stream a command's stdout into `path`, at most `max_bytes` (then it is stopped): (exit code or -1 when
        stopped, bytes written, stderr's last line)."""
        argv = [str(a) for a in argv]
        self.ran.append(" ".join(argv))
        env = {**(self.env if self.env is not None else os.environ), "LC_ALL": "C"}
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as out, tempfile.TemporaryFile() as err:
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, env=env)
            except OSError as exc:
                raise CollectError(f"cannot run `{argv[0]}`: {exc.strerror or exc}") from exc
            assert proc.stdout is not None
            written, deadline = 0, time.monotonic() + self.timeout_s
            while chunk := proc.stdout.read1(1 << 20):
                chunk = chunk[: max_bytes - written]
                out.write(chunk)
                written += len(chunk)
                if written >= max_bytes or time.monotonic() > deadline:
                    proc.kill()
                    break
            proc.stdout.close()
            code = proc.wait()
            err.seek(0)
            return (code if written < max_bytes else -1), written, last_line(err.read()[-8192:])

    def text(self, argv: Sequence[str]) -> str:
        return self.run(argv).stdout.decode("utf-8", errors="replace")


def shown(argv: Sequence[str]) -> str:
    """A command as a line to show: an argument of more than 200 characters (a script's source) by its size."""
    return " ".join(a if len(a) <= 200 else f"<{len(a):,} characters>" for a in argv)


def last_line(data: bytes) -> str:
    lines = [ln for ln in data.decode("utf-8", errors="replace").splitlines() if ln.strip()]
    return lines[-1].strip()[:300] if lines else "(no message)"


__all__ = ["CollectError", "Runner", "last_line"]
