"""A command imports only what it uses (issue 17, startup): `--help` loads nothing of diagagent's but the CLI
(no pydantic, settings or telemetry), and no command loads the TUI, Slack or LLM stacks, the vector store or
the dataframes unless its path needs them.

Each case runs the CLI in a fresh interpreter and reads its `sys.modules` at exit; nothing is timed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "job-42"

# run `diagagent ARGS` in this interpreter, then write the names in sys.modules (whatever the exit) to argv[1]
RUN = """
import json, sys
out, args = sys.argv[1], sys.argv[2:]
sys.argv = ["diagagent", *args]
try:
    from diagagent.apps.cli import main
    main()
finally:
    with open(out, "w") as f:
        json.dump(sorted(sys.modules), f)
"""

# the stacks a command loads only when it is what it does (chat, slack, --llm, kb, eval...)
UI_AND_LLM = ("textual", "slack_bolt", "slack_sdk", "openai", "langchain_core", "langchain_openai",
              "diagagent.apps.tui", "diagagent.apps.slack", "diagagent.agent.llm")
DATA = ("chromadb", "polars", "pyarrow", "scipy", "numpy", "drain3")
COLLECTORS = ("diagagent.telemetry.collect.slurm", "diagagent.telemetry.collect.k8s")
CMD = "diagagent.apps.cmd_"
CLI = {"diagagent", "diagagent.apps", "diagagent.apps.cli", "diagagent.apps.common"}


def loaded(args: list[str], tmp_path: Path) -> tuple[set[str], subprocess.CompletedProcess]:
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DIAGAGENT_", "SLACK_", "OPENAI_"))}
    env.update(DIAGAGENT_STATE_DIR=str(tmp_path / "state"), COLUMNS="100")
    done = subprocess.run([sys.executable, "-c", RUN, str(out), *args], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, check=False)
    return set(json.loads(out.read_text())), done


def heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """Which of `names` (packages: a submodule counts) were imported."""
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["diagnose", "--help"],
                                  ["kb", "search", "--help"]])
def test_help_and_version_import_nothing_of_diagagent_but_the_cli(args: list[str], tmp_path: Path) -> None:
    modules, done = loaded(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "diagagent" in done.stdout.lower()
    beyond_cli = [m for m in modules if m.startswith("diagagent") and not (m in CLI or m.startswith(CMD))]
    assert beyond_cli == []  # no settings, telemetry, contract, analysis...
    assert heavy(modules, UI_AND_LLM + DATA + ("yaml",)) == []
    if len(args) == 1:  # typer loads pydantic itself to parse a command's options; the top level needs none
        assert heavy(modules, ("pydantic", "pydantic_settings")) == []
    if args == ["--help"]:
        assert "diagnose" in done.stdout and "collect" in done.stdout  # every command module was registered


@pytest.mark.parametrize(("args", "unused"), [
    (["show", str(EXAMPLE), "--json"], UI_AND_LLM + COLLECTORS + ("chromadb", "scipy", "drain3", "polars")),
    # (the log scan's fast path groups a block's lines with pyarrow: logs needs it)
    (["logs", str(EXAMPLE), "--json"], UI_AND_LLM + COLLECTORS + ("chromadb", "scipy", "polars")),
    (["diagnose", str(EXAMPLE), "--json", "--no-submit"], UI_AND_LLM + COLLECTORS),
])
def test_a_command_on_the_example_imports_only_what_its_path_needs(args: list[str], unused: tuple[str, ...],
                                                                    tmp_path: Path) -> None:
    modules, done = loaded(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)  # it did its work
    assert heavy(modules, unused) == []
    assert "diagagent.telemetry.bundle" in modules  # and read the bundle (the check above is not vacuous)
