"""What `pip install diagagent` brings (issue 18, item 15): only what the default path imports, the rest in extras.

The default path (diagnose a bundle, open the TUI) runs in a subprocess with matplotlib and slack-bolt made
unimportable; every default requirement must be one it imported, or one of the mission's packages.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the mission's packages stay in the default install whatever the default path imports
MISSION = {"langchain", "langchain-core", "langchain-openai", "langgraph", "openai", "chromadb", "drain3",
           "pydantic", "pydantic-settings", "textual"}
DEFAULT_PATH = r"""
import importlib.metadata, json, sys
for name in ("matplotlib", "slack_bolt", "slack_sdk", "sklearn"):
    sys.modules[name] = None  # not installed: an import raises ModuleNotFoundError
from typer.testing import CliRunner
from diagagent.apps.cli import build_app
import diagagent.apps.tui.app  # noqa: F401  (the TUI)
result = CliRunner().invoke(build_app(), ["diagnose", sys.argv[1], "--report", sys.argv[2]])
owners = importlib.metadata.packages_distributions()
used = sorted({d for m in list(sys.modules) if sys.modules[m] is not None for d in owners.get(m.partition(".")[0], [])})
print(json.dumps({"exit": result.exit_code, "output": result.output, "used": used}))
"""


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(spec: str) -> str:
    return norm(re.split(r"[\s\[<>=!~;]", spec, maxsplit=1)[0])


def test_default_install_is_what_the_default_path_imports(tmp_path: Path) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = {**os.environ, "DIAGAGENT_STATE_DIR": str(tmp_path / "state"), "DIAGAGENT_JOBS_DIR": str(tmp_path)}
    report = tmp_path / "report.html"
    run = subprocess.run([sys.executable, "-c", DEFAULT_PATH, str(ROOT / "examples" / "job-42"), str(report)],
                         check=False, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["exit"] == 0, out["output"][-2000:]
    assert "node-013" in out["output"]
    # the report is still written; each picture says what to install instead of failing
    assert "pip install &#x27;diagagent[report]&#x27;" in report.read_text() or \
        "pip install 'diagagent[report]'" in report.read_text()
    used = {norm(d) for d in out["used"]}
    unused = sorted(requirement_name(r) for r in project["dependencies"]
                    if requirement_name(r) not in used | MISSION)
    assert not unused, f"default requirements the default path never imports: {unused}"
    extras = {k: {requirement_name(r) for r in v} for k, v in project["optional-dependencies"].items()}
    assert "matplotlib" in extras["report"] and "slack-bolt" in extras["slack"]
    # the CI installs `.[test]` on a fresh clone: that must bring what the report and Slack tests import
    assert any(r.startswith("diagagent[") and "report" in r and "slack" in r
               for r in project["optional-dependencies"]["test"])
