"""Tool manifests: `tools/*.yaml` declares each agent tool (name, description for the model, parameters, kind).

A manifest binds a tool to a plain Python function by dotted path; nothing else defines what the model may call.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, create_model

from diagagent.telemetry.errors import BundleError

ToolKind = Literal["read", "probe", "propose"]
_PY_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}


class ParamSpec(BaseModel):
    type: Literal["string", "integer", "number", "boolean", "array"] = "string"
    description: str = ""
    default: Any = None
    required: bool = False
    enum: list[str] | None = None
    items: Literal["string", "integer"] | None = None  # for arrays


class ToolSpec(BaseModel):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]{1,63}$")
    kind: ToolKind
    function: str = Field(description="module:function implementing the tool")
    description: str
    parameters: dict[str, ParamSpec] = Field(default_factory=dict)

    def resolve(self) -> Callable[..., Any]:
        module, _, attr = self.function.partition(":")
        return getattr(importlib.import_module(module), attr)

    def args_model(self) -> type[BaseModel]:
        """A pydantic model of the parameters: the JSON schema the model sees, and the validator of its calls."""
        fields: dict[str, Any] = {}
        for name, p in self.parameters.items():
            if p.type == "array":
                item = _PY_TYPES[p.items or "string"]
                py: Any = list[item]  # type: ignore[valid-type]
            elif p.enum:
                py = Literal[tuple(p.enum)]  # type: ignore[valid-type]
            else:
                py = _PY_TYPES[p.type]
            if p.required:
                fields[name] = (py, Field(description=p.description))
            else:
                fields[name] = (py | None, Field(p.default, description=p.description))
        return create_model(f"{self.name}_args", **fields)


class ToolManifest(BaseModel):
    tools: list[ToolSpec]


def load_tool_specs(tools_dir: Path) -> list[ToolSpec]:
    """Every agent tool declared in `tools_dir/*.yaml` that has a `tools:` list (other YAML there is skipped)."""
    specs: list[ToolSpec] = []
    for path in sorted(tools_dir.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict) or "tools" not in data:
            continue
        try:
            specs.extend(ToolManifest.model_validate(data).tools)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise BundleError(str(path), f"bad tool manifest at {'.'.join(map(str, err['loc']))}: {err['msg']}") from exc
    names = [s.name for s in specs]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise BundleError(str(tools_dir), f"tool names declared twice: {', '.join(sorted(dupes))}")
    return specs
