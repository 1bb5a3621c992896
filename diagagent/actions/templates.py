"""Command templates from `tools/actions.yaml`, rendered into argv lists with every substituted value validated.

Nothing here runs anything; a value that fails its check (a hostname with `;`, a non-hex commit) refuses the action.
"""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from diagagent.contract import ActionProposal

TemplateExecutor = Literal["slurm", "kubernetes", "script"]
Argv = list[str]
PLACEHOLDERS = frozenset({"host", "job_id", "ledger_id", "step", "checkpoint", "commit", "kind"})
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "csh", "tcsh", "fish", "busybox"})
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")
COMMIT_RE = re.compile(r"[0-9A-Fa-f]{7,40}")
PATH_RE = re.compile(r"[A-Za-z0-9._/=+][A-Za-z0-9._/=+-]{0,4095}")
TEMPLATES_FILE = "actions.yaml"


class TemplateError(ValueError):
    """The action cannot be rendered: no template for it, or a template or value that is not safe."""


class UnsafeValue(TemplateError):
    pass


def _fields(arg: str) -> list[str]:
    """The placeholder names in one argv element; only plain `{name}` is allowed (no attributes, specs, conversions)."""
    names = []
    for _, name, spec, conversion in string.Formatter().parse(arg):
        if name is None:
            continue
        if name not in PLACEHOLDERS or spec or conversion:
            raise TemplateError(f"template argument {arg!r}: unknown placeholder {{{name}}}; "
                                f"known: {', '.join(sorted(PLACEHOLDERS))}")
        names.append(name)
    return names


def _checked_argv(argv: Argv) -> Argv:
    if not argv:
        raise TemplateError("a command template is empty")
    for arg in argv:
        _fields(arg)
    if _fields(argv[0]):
        raise TemplateError(f"template {argv!r}: the program itself may not be a placeholder")
    if Path(argv[0]).name in SHELLS:
        raise TemplateError(f"template {argv!r}: runs a shell; write the command as an argv list instead")
    return argv


class ExecutorTemplates(BaseModel):
    """The argv templates of one executor, per action kind."""

    model_config = ConfigDict(extra="forbid")
    timeout_s: float = Field(600.0, gt=0)
    evict: list[Argv] | None = None
    restart: list[Argv] | None = None
    rollback: list[Argv] | None = None
    command: Argv = Field(default_factory=list)  # the script executor's program

    @field_validator("evict", "restart", "rollback")
    @classmethod
    def _safe_commands(cls, commands: list[Argv] | None) -> list[Argv] | None:
        return [_checked_argv(argv) for argv in commands] if commands is not None else None

    @field_validator("command")
    @classmethod
    def _safe_command(cls, argv: Argv) -> Argv:
        return _checked_argv(argv) if argv else argv


class ActionTemplates(BaseModel):
    """`tools/actions.yaml`."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["action-templates"] = "action-templates"
    version: int = 1
    dry_run_renders: TemplateExecutor = "slurm"
    executors: dict[TemplateExecutor, ExecutorTemplates] = Field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> ActionTemplates:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            return cls.model_validate(data or {})
        except OSError as exc:
            raise TemplateError(f"cannot read {path}: {exc.strerror or exc}") from exc
        except (yaml.YAMLError, ValidationError) as exc:
            raise TemplateError(f"{path}: {exc}") from exc

    def of(self, executor: TemplateExecutor) -> ExecutorTemplates:
        return self.executors.get(executor) or ExecutorTemplates()


def _name(value: str, what: str) -> str:
    if not NAME_RE.fullmatch(value):
        raise UnsafeValue(f"{what} {value!r} is not a plain name ([A-Za-z0-9._-], not starting with . _ or -): "
                          "refused")
    return value


def _values(proposal: ActionProposal, job_id: str, ledger_id: int, used: set[str]) -> dict[str, str]:
    """The placeholder values the templates use, each validated; a missing or unsafe one refuses the action."""
    values: dict[str, str] = {"kind": proposal.kind, "ledger_id": str(int(ledger_id))}
    if "job_id" in used:
        values["job_id"] = _name(job_id, "job id")
    if "step" in used:
        if proposal.from_step is None or proposal.from_step < 0:
            raise UnsafeValue(f"the action has no checkpoint step to substitute (got {proposal.from_step!r})")
        values["step"] = str(int(proposal.from_step))
    if "commit" in used:
        commit = proposal.to_commit or ""
        if not COMMIT_RE.fullmatch(commit):
            raise UnsafeValue(f"commit {commit!r} is not 7 to 40 hex digits: refused")
        values["commit"] = commit
    if "checkpoint" in used:
        path = proposal.checkpoint_path or ""
        if not PATH_RE.fullmatch(path) or ".." in path.split("/"):
            raise UnsafeValue(f"checkpoint path {path!r} has characters outside [A-Za-z0-9._/=+-] or '..': refused")
        values["checkpoint"] = path
    return values


def render(commands: list[Argv], proposal: ActionProposal, job_id: str, ledger_id: int) -> list[Argv]:
    """Fill the templates; an argv that names {host} is repeated for every node, in order."""
    used = {name for argv in commands for arg in argv for name in _fields(arg)}
    values = _values(proposal, job_id, ledger_id, used)
    hosts = [_name(h, "hostname") for h in dict.fromkeys(proposal.nodes)] if "host" in used else []
    if "host" in used and not hosts:
        raise UnsafeValue("the action names no node to substitute for {host}")
    rendered: list[Argv] = []
    for argv in commands:
        per_node = any("host" in _fields(arg) for arg in argv)
        for host in hosts if per_node else [None]:
            fill = {**values, "host": host} if host is not None else values
            rendered.append([arg.format_map(fill) for arg in argv])
    return rendered


def render_for(templates: ActionTemplates, executor: TemplateExecutor, proposal: ActionProposal, job_id: str,
               ledger_id: int) -> list[Argv]:
    """The argv lists `executor` runs for the proposal; none for `none`; TemplateError when it has no template."""
    if proposal.kind == "none":
        return []
    section = templates.of(executor)
    if executor == "script":
        if not section.command:
            raise TemplateError("the script executor has no command: set executors.script.command in "
                                f"{TEMPLATES_FILE} (a local copy of tools/, DIAGAGENT_TOOLS_DIR)")
        return render([section.command], proposal, job_id, ledger_id)
    commands = getattr(section, proposal.kind)
    if not commands:
        raise TemplateError(f"no {executor} command is configured for {proposal.kind} in {TEMPLATES_FILE}: "
                            "this action cannot run under that executor")
    return render(commands, proposal, job_id, ledger_id)


__all__ = ["ActionTemplates", "ExecutorTemplates", "TemplateError", "UnsafeValue", "render", "render_for"]
