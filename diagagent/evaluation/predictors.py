"""Predictors the eval runs: a callable Bundle -> Prediction (a Diagnosis, plus LLM usage for the LLM agent).

The diagagent agents are imported lazily, so the eval runs baselines alone before (or without) them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

from diagagent.config import Settings
from diagagent.diagnosis import Diagnosis
from diagagent.telemetry import Bundle

AgentName = Literal["playbook", "llm", "none"]


class Prediction(BaseModel):
    diagnosis: Diagnosis
    llm_calls: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None  # estimated from DIAGAGENT_LLM_PRICE_IN/_OUT
    llm_submitted: bool | None = None  # the model submitted a diagnosis (the LLM agent only)
    llm_fallback: str | None = None  # why the playbook's diagnosis stands instead of the model's


Predictor = Callable[[Bundle], Prediction]


class AgentUnavailable(RuntimeError):
    """The chosen diagagent agent is not in this build (or cannot run here)."""


def _import_agent(agent: str, module: str, name: str) -> Callable:
    """`module.name`, imported only when asked for; AgentUnavailable when this build lacks it."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise AgentUnavailable(f"the {agent} agent is not available: {module}.{name}(bundle, settings) is "
                               f"missing from this build ({exc})") from exc


def playbook_predictor(settings: Settings) -> Predictor:
    """`diagagent.diagnosis.diagnose(bundle, settings)`: the deterministic playbook."""
    diagnose = _import_agent("playbook", "diagagent.diagnosis", "diagnose")

    def predict(bundle: Bundle) -> Prediction:
        return Prediction(diagnosis=diagnose(bundle, settings))

    return predict


def llm_predictor(settings: Settings) -> Predictor:
    """`diagagent.agent.diagnose_with_llm(bundle, settings)` -> (Diagnosis, usage) with llm_calls, tokens_in/out."""
    diagnose_with_llm = _import_agent("LLM", "diagagent.agent", "diagnose_with_llm")

    def predict(bundle: Bundle) -> Prediction:
        diagnosis, usage = diagnose_with_llm(bundle, settings)
        tokens_in, tokens_out = usage.get("tokens_in"), usage.get("tokens_out")
        return Prediction(diagnosis=diagnosis, llm_calls=usage.get("llm_calls"), tokens_in=tokens_in,
                          tokens_out=tokens_out, cost_usd=settings.llm_cost(tokens_in or 0, tokens_out or 0),
                          llm_submitted=usage.get("submitted"), llm_fallback=usage.get("fallback"))

    return predict


def agent_predictor(agent: AgentName, settings: Settings) -> Predictor | None:
    """The predictor for `--agent`; None for `none`. Raises AgentUnavailable when the agent is not built yet."""
    if agent == "none":
        return None
    return playbook_predictor(settings) if agent == "playbook" else llm_predictor(settings)
