"""The one Settings object: every knob diagagent has, from env `DIAGAGENT_*` and an optional `diagagent.toml`.

Nothing reads the environment anywhere else; build a Settings with `Settings.load()` and pass it down.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from diagagent.telemetry.limits import ReadLimits

if TYPE_CHECKING:
    from diagagent.telemetry.store import JobSource

Executor = Literal["dry-run", "slurm", "kubernetes", "script"]
Embedding = Literal["hashing", "minilm", "openai"]
Redact = Literal["off", "on", "auto"]


def _default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "diagagent"


class Settings(BaseSettings):
    """Configuration, highest precedence first: constructor arguments, env `DIAGAGENT_*`, `diagagent.toml`."""

    model_config = SettingsConfigDict(env_prefix="DIAGAGENT_", extra="ignore", toml_file=None, populate_by_name=True)

    jobs_dir: Path = Field(Path("jobs"), description="Where `JobStore` finds <job_id>/ bundles.")
    job_source: Literal["dir", "slurm", "k8s"] = Field(
        "dir", description="Where `diagnose 42`, `chat 42` and the Slack bot find job 42: the jobs folder (dir), or "
                           "collected on demand from Slurm or Kubernetes into <state_dir>/collected/.")
    k8s_namespace: str = Field("default", description="The namespace a bare job name is looked up in (k8s source).")
    k8s_context: str | None = Field(None, description="A kubeconfig context to use instead of the current one.")
    collect_quiet_for_s: float = Field(600.0, gt=0, description="A running Slurm job whose output has not moved for "
                                                                "this long is collected as hung.")
    state_dir: Path = Field(default_factory=_default_state_dir, description="Ledger, schema cache, normal pool.")
    fast_scan: bool = Field(True, description="The log scan reads blocks at once and takes the lines that cannot "
                                               "matter in bulk (same findings); DIAGAGENT_FAST_SCAN=0 reads every "
                                               "line one by one.")
    compiled_scan: bool = Field(True, description="The fast scan's per-byte passes (newlines, line shapes) run in C "
                                                   "where the install compiled them (same findings); "
                                                   "DIAGAGENT_COMPILED_SCAN=0 runs them in numpy and pyarrow.")

    llm_base_url: str | None = Field(None, description="OpenAI-compatible endpoint; none means the playbook.")
    llm_model: str = "gpt-4o-mini"
    llm_api_key: SecretStr | None = Field(None, description="Falls back to OPENAI_API_KEY.")
    llm_timeout_s: float = 120.0
    llm_max_steps: int = 12
    llm_max_tokens: int | None = Field(
        None, gt=0, description="Token budget (in + out) per incident; at it the agent stops with a best-effort "
                                "answer and says so. None: no budget.")
    llm_max_output_tokens: int | None = Field(
        None, gt=0, description="At most this many tokens per model reply (a rambling model is cut off). None: the "
                                "endpoint's own limit.")
    llm_server: Literal["openai", "llama-cpp-python"] = Field(
        "openai", description="The endpoint's dialect: llama-cpp-python's server (chatml-function-calling) cannot "
                              "force a tool call and rejects a null content, so it gets tool_choice=auto and \"\".")
    llm_price_in: float | None = Field(None, ge=0, description="USD per million input tokens, for the cost estimate.")
    llm_price_out: float | None = Field(None, ge=0, description="USD per million output tokens.")
    redact: Redact = Field(
        "auto", description="Placeholders (host-1, ip-3, ...) for hosts, IPs, MACs, users, home and job paths and "
                            "secrets in what goes to the LLM endpoint and a shared Chroma server; auto: on for any "
                            "endpoint not on loopback.")

    chroma_path: Path | None = Field(None, description="Embedded chromadb path; default <state_dir>/chroma.")
    chroma_url: str | None = Field(None, description="A shared Chroma server (HttpClient) instead of embedded.")
    embedding: Embedding = "hashing"
    embedding_url: str | None = None
    embedding_model: str = "text-embedding-3-small"

    analyzer_budget_s: float | None = Field(
        300.0, ge=0, description="Wall-clock seconds each analyzer may spend reading its files; past it, it reads no "
                                 "more and the diagnosis notes what was left unread. None: no limit.")

    workers: int | None = Field(
        None, ge=1, description="Processes for the analyzers' file work (logs, probes, stacks) on a large bundle; "
                                "None: one per core. Small bundles are read in this process whatever it says.")
    ray_address: str | None = Field(
        None, description="Run the per-host file work as Ray tasks on this cluster (`ray://head:10001`, `auto`, "
                          "`head:6379`), or `local` to start Ray on this machine; every Ray node must see the "
                          "bundle at the same path. Needs `pip install 'diagagent[ray]'`. None: no Ray.")

    approvers: list[str] = Field(default_factory=list, description="Who may approve actions (user ids).")
    admins: list[str] = Field(default_factory=list,
                              description="Operators who may act as another user (--as); audited as 'X acting as Y'.")
    lease_grace_s: float = Field(60.0, description="An execution's lease outlasts its commands' timeouts by this.")
    executor: Executor = "dry-run"

    tools_dir: Path | None = Field(None, description="A local copy of tools/ to use instead of the packaged one.")
    prompts_dir: Path | None = None
    knowledge_dir: Path | None = None
    limits: ReadLimits = Field(default_factory=ReadLimits, description="Budgets for reading a bundle (untrusted input): "
                               "bytes, lines, decompression ratio, tarball size, job.yaml size and shape, job sizes.")

    # Slack's own variable names are read too; the DIAGAGENT_ ones win when both are set.
    slack_bot_token: SecretStr | None = Field(
        None, validation_alias=AliasChoices("DIAGAGENT_SLACK_BOT_TOKEN", "SLACK_BOT_TOKEN"))
    slack_app_token: SecretStr | None = Field(
        None, validation_alias=AliasChoices("DIAGAGENT_SLACK_APP_TOKEN", "SLACK_APP_TOKEN"))
    slack_signing_secret: SecretStr | None = Field(
        None, validation_alias=AliasChoices("DIAGAGENT_SLACK_SIGNING_SECRET",
                                            "SLACK_SIGNING_SECRET"))
    # HTTP mode (`diagagent slack --http`): where it listens and what it accepts before anything is parsed.
    slack_http_host: str = Field("127.0.0.1", description="Address to listen on; 0.0.0.0 for every interface.")
    slack_max_body_bytes: int = Field(1 << 20, gt=0, description="A larger request is refused unread (413).")
    slack_read_timeout_s: float = Field(10.0, gt=0, description="A request must arrive whole within this.")
    slack_max_connections: int = Field(32, ge=1, description="Open connections at once; more get 503.")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_path = Path(os.environ.get("DIAGAGENT_CONFIG", "diagagent.toml"))
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if toml_path.is_file():
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_path))
        return tuple(sources)

    @classmethod
    def load(cls, **overrides: object) -> Settings:
        """Settings from the environment and `diagagent.toml` (or `$DIAGAGENT_CONFIG`), with overrides on top."""
        return cls(**overrides)

    def api_key(self) -> str | None:
        if self.llm_api_key is not None:
            return self.llm_api_key.get_secret_value()
        return os.environ.get("OPENAI_API_KEY")

    def jobs(self) -> JobSource:
        """The configured job source (`job_source`): the jobs folder, or a live Slurm or Kubernetes."""
        from diagagent.telemetry.collect.source import job_source

        return job_source(self.job_source, self.jobs_dir, self.state_dir, self.limits,
                          namespace=self.k8s_namespace, context=self.k8s_context,
                          quiet_for_s=self.collect_quiet_for_s)

    def redact_for(self, url: str | None) -> bool:
        """Whether what goes to `url` (the LLM endpoint, a Chroma server) is redacted first."""
        from diagagent.telemetry.redact import is_loopback_url

        return self.redact == "on" or (self.redact == "auto" and not is_loopback_url(url))

    def llm_cost(self, tokens_in: int, tokens_out: int) -> float | None:
        """Estimated USD for these tokens; None when neither price is set (an unset one counts as free)."""
        if self.llm_price_in is None and self.llm_price_out is None:
            return None
        return (tokens_in * (self.llm_price_in or 0.0) + tokens_out * (self.llm_price_out or 0.0)) / 1e6

    def chroma_dir(self) -> Path:
        return self.chroma_path or self.state_dir / "chroma"

    def content_dir(self, kind: Literal["tools", "prompts", "knowledge"]) -> Path:
        """The SRE-editable content folder: the configured local copy, else the one shipped with the package."""
        override = {"tools": self.tools_dir, "prompts": self.prompts_dir, "knowledge": self.knowledge_dir}[kind]
        return override if override is not None else packaged_content_dir(kind)


def packaged_content_dir(kind: str) -> Path:
    """`tools/`, `prompts/` or `knowledge/`: inside the wheel, or at the top of a source checkout."""
    package = Path(__file__).resolve().parent
    installed = package / "_content" / kind
    if installed.is_dir():
        return installed
    return package.parent / kind
