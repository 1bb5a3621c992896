"""Tool manifests load and validate; tool results stay under budget and say what they cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagagent.agent.budget import compact_json
from diagagent.agent.manifest import load_tool_specs
from diagagent.config import Settings
from diagagent.telemetry import BundleError


def test_shipped_manifest_binds_every_tool() -> None:
    specs = load_tool_specs(Settings.load().content_dir("tools"))
    names = {s.name for s in specs}
    assert {"draft_diagnosis", "log_events", "node_health", "propose_action"} <= names
    for spec in specs:
        assert callable(spec.resolve()), spec.name
    kinds = {s.name: s.kind for s in specs}
    assert kinds["propose_action"] == "propose" and kinds["request_probe"] == "probe"
    assert not any(s.kind not in ("read", "probe", "propose") for s in specs)


def test_args_model_validates_calls() -> None:
    spec = next(s for s in load_tool_specs(Settings.load().content_dir("tools")) if s.name == "log_events")
    model = spec.args_model()
    assert model(top=3, role="cause").role == "cause"
    with pytest.raises(ValueError):
        model(role="approve_everything")


def test_bad_manifest_names_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("tools:\n  - name: Bad Name\n    kind: read\n    function: a:b\n    description: d\n")
    with pytest.raises(BundleError) as err:
        load_tool_specs(tmp_path)
    assert "x.yaml" in str(err.value) and "tools.0.name" in str(err.value)


def test_compact_json_cuts_longest_list_and_says_so() -> None:
    result = {"events": [{"text": "x" * 100, "i": i} for i in range(500)], "job": "42"}
    text = compact_json(result, budget=3000)
    data = json.loads(text)
    assert len(text) <= 3000
    assert 1 <= len(data["events"]) < 500 and data["job"] == "42"
    assert "500" in data["_truncated"]["events"]


def test_compact_json_cuts_long_strings() -> None:
    data = json.loads(compact_json({"line": "y" * 5000}))
    assert data["line"].startswith("yyy") and "more chars" in data["line"] and len(data["line"]) < 600
