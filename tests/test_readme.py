"""The README's sample output is a real run of `diagagent diagnose examples/job-42` at 80 columns (issue 18,
item 14), so it cannot drift; `DIAGAGENT_UPDATE_README=1 pytest tests/test_readme.py` writes it again.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from typer.testing import CliRunner

from diagagent.apps.cli import build_app

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(<!-- diagagent-sample:begin[^>]*-->\n```\n)(.*?)(```\n<!-- diagagent-sample:end -->)", re.DOTALL)


def test_readme_sample_is_the_real_output(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # a fresh state dir named the same on every run: the output may name it
    env = {"COLUMNS": "80", "DIAGAGENT_STATE_DIR": "state", "DIAGAGENT_JOBS_DIR": "jobs",
           "NO_COLOR": "1", "TERM": "dumb"}
    result = CliRunner().invoke(build_app(), ["diagnose", str(ROOT / "examples" / "job-42")], env=env)
    assert result.exit_code == 0, result.output
    real = "\n".join(line.rstrip() for line in result.output.splitlines()).strip() + "\n"
    real = real.replace(str(ROOT) + "/", "")
    readme = ROOT / "README.md"
    text = readme.read_text()
    found = BLOCK.search(text)
    assert found, "README.md lost its diagagent-sample markers"
    if os.environ.get("DIAGAGENT_UPDATE_README") == "1":
        readme.write_text(text[:found.start(2)] + real + text[found.end(2):])
        return
    assert found.group(2) == real, "README.md's sample differs from the real output: DIAGAGENT_UPDATE_README=1"
    for line in real.splitlines():
        assert len(line) <= 80, line


def test_every_docs_path_the_readme_and_manifest_name_exists() -> None:
    for doc in (ROOT / "README.md", ROOT / "docs" / "slack-app-manifest.yaml"):
        for name in re.findall(r"(docs/[\w./-]+\.(?:md|yaml|png|svg))", doc.read_text()):
            assert (ROOT / name).exists(), f"{doc.name} names {name}, which does not exist"


def test_ci_runs_the_readmes_test_command() -> None:
    quickstart = re.search(r"## Quickstart\n\n```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
    assert quickstart, "README.md lost its Quickstart commands"
    test_command = quickstart.group(1).splitlines()[1]
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == test_command and "bash .ci/system_packages.sh" in ci
