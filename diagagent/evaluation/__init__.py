"""The offline eval: score diagnoses (diagagent's and the no-tool baselines') against truth.json, and report.

metrics (pure scoring), baselines, predictors, suites (simulated, cached), runner, report (JSON, tables, Markdown).
"""

from diagagent.evaluation.baselines import BASELINES
from diagagent.evaluation.metrics import CaseScore, LineIndex, Report, aggregate, score_case
from diagagent.evaluation.predictors import AgentUnavailable, Prediction, Predictor
from diagagent.evaluation.report import eval_json
from diagagent.evaluation.runner import EvalCase, EvalRun, find_cases, run_cases

__all__ = ["BASELINES", "AgentUnavailable", "CaseScore", "EvalCase", "EvalRun", "LineIndex", "Prediction",
           "Predictor", "Report", "aggregate", "eval_json", "find_cases", "run_cases", "score_case"]
