"""Build hook: compiles diagagent/_lines.c (the log scan's per-byte passes) with the machine's C compiler.
An editable install builds it beside its source; a wheel carries it. Without a compiler the scan runs its Python path.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = "diagagent/_lines.c"


class LinesBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        root = Path(self.root)
        self.temp: str | None = None
        if version == "editable":  # (the package is imported from the source tree)
            out = root / "diagagent" / f"_lines{suffix}"
        else:
            self.temp = tempfile.mkdtemp(prefix="diagagent-build-")
            out = Path(self.temp) / f"_lines{suffix}"
        if not compile_extension(root / SOURCE, out):
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if version != "editable":
            build_data["force_include"][str(out)] = f"diagagent/_lines{suffix}"

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        if getattr(self, "temp", None):
            shutil.rmtree(self.temp, ignore_errors=True)


def compile_extension(source: Path, out: Path) -> bool:
    """cc -O3 -shared SOURCE -o OUT against this Python's headers; False (and a warning) if it cannot."""
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    link = ["-bundle", "-undefined", "dynamic_lookup"] if sys.platform == "darwin" else ["-shared"]
    cmd = [*cc, "-O3", "-fPIC", "-fno-strict-aliasing", f"-I{sysconfig.get_paths()['include']}", *link,
           str(source), "-o", str(out)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:
        done = None
        error = str(exc)
    else:
        error = done.stderr
    if done is None or done.returncode != 0:
        print(f"diagagent: could not compile {source.name} ({' '.join(cmd)}): {error.strip()[-2000:]}\n"
              "diagagent: the log scan will run its Python path (the same answers, slower)", file=sys.stderr)
        return False
    return True
