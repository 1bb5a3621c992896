"""Imports point down only: telemetry <- analysis <- schemata, actions <- diagnosis <- agent <- apps, with the
output contract (diagagent.contract) below them all, importing nothing of diagagent's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "diagagent"
# what each part may not import (anything above it)
ABOVE = {
    "contract": ("diagagent",),
    "telemetry": ("diagagent.analysis", "diagagent.schemata", "diagagent.actions", "diagagent.diagnosis",
                  "diagagent.agent", "diagagent.apps", "diagagent.evaluation"),
    "analysis": ("diagagent.schemata", "diagagent.actions", "diagagent.diagnosis", "diagagent.agent",
                 "diagagent.apps", "diagagent.evaluation"),
    "schemata": ("diagagent.actions", "diagagent.diagnosis", "diagagent.agent", "diagagent.apps",
                 "diagagent.evaluation"),
    "actions": ("diagagent.schemata", "diagagent.diagnosis", "diagagent.agent", "diagagent.apps",
                "diagagent.evaluation"),
    "diagnosis": ("diagagent.agent", "diagagent.apps", "diagagent.evaluation"),
    "agent": ("diagagent.apps", "diagagent.evaluation"),
}


def _imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
    return out


@pytest.mark.parametrize("part", sorted(ABOVE))
def test_imports_point_down(part: str) -> None:
    files = [PACKAGE / "contract.py"] if part == "contract" else sorted((PACKAGE / part).rglob("*.py"))
    bad = [f"{f.relative_to(PACKAGE)}:{line} imports {module}" for f in files for line, module in _imports(f)
           if any(module == p or module.startswith(p + ".") for p in ABOVE[part])]
    assert not bad, "\n".join(bad)
