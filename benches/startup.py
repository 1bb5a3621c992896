"""Startup: `diagagent --help`, `show`, `logs` and `diagnose` on examples/job-42, against `python -c pass`.

Each command runs as a fresh process (the installed `diagagent` script beside this interpreter, else `python
-m diagagent`), offline (no DIAGAGENT_* from the caller's environment; a temporary DIAGAGENT_STATE_DIR), once
to warm up (the schema cache is seeded and the bytecode cached then), then --runs times, interleaved; the
median and least wall seconds and the ratios to `python -c pass` measured in the same run (median to median,
least to least) are printed. A bare typer app's --help shows the floor any typer CLI pays. The issue's target:
`diagagent --help` under 0.2 s. --no-pyc keeps a PYTHONDONTWRITEBYTECODE=1 of the caller's (as this sandbox
sets): diagagent's source is then compiled on every run, as it was when the issue measured 0.38 s.

    python benches/startup.py [--runs 7] [--no-pyc] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "job-42"
# the floor of any typer CLI's --help: typer and its rich help formatting, two commands, none of diagagent
BARE_TYPER = """
import typer
app = typer.Typer(help="A bare typer app.")
@app.command()
def hello(name: str = typer.Option("world", help="Whom to greet.")) -> None:
    \"\"\"Say hello.\"\"\"
@app.command()
def bye() -> None:
    \"\"\"Say bye.\"\"\"
app()
"""
QUICK = ("--help", "--version")  # cheap: run more often, the median settles only over many runs


def diagagent() -> list[str]:
    script = Path(sys.executable).with_name("diagagent")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "diagagent"]


def commands() -> dict[str, list[str]]:
    cli = diagagent()
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "bare typer app --help": [sys.executable, "-c", BARE_TYPER, "--help"],
        "diagagent --help": [*cli, "--help"],
        "diagagent --version": [*cli, "--version"],
        "diagagent show examples/job-42": [*cli, "show", str(EXAMPLE)],
        "diagagent logs examples/job-42": [*cli, "logs", str(EXAMPLE)],
        "diagagent diagnose examples/job-42": [*cli, "diagnose", str(EXAMPLE)],
    }


def offline_env(state_dir: Path, pyc: bool) -> dict[str, str]:
    """No settings, tokens or endpoints of the caller's. With `pyc`, bytecode cached as an installed package
    has it (in the temporary dir, whatever PYTHONDONTWRITEBYTECODE says): no run compiles the source."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DIAGAGENT_", "SLACK_", "OPENAI_"))}
    env.update(DIAGAGENT_STATE_DIR=str(state_dir / "state"), COLUMNS="100", NO_COLOR="1")
    if pyc:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(state_dir / "pycache")
    return env


def seconds(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode(errors='replace')[-2000:]}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="timed runs per command (after one warm-up run)")
    ap.add_argument("--no-pyc", action="store_true",
                    help="keep the caller's PYTHONDONTWRITEBYTECODE: the source compiled on every run")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    state = Path(tempfile.mkdtemp(prefix="diagagent-startup-"))
    try:
        # cwd: no diagagent.toml or jobs/ of the caller's is picked up
        env, cwd = offline_env(state, pyc=not args.no_pyc), state
        cmds = commands()
        for argv in cmds.values():
            seconds(argv, env, cwd)  # warm-up: page cache, .pyc files, the schema cache's first seeding
        times: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(args.runs):  # interleaved: a burst of load from elsewhere hits every command alike
            for name, argv in cmds.items():
                repeat = 3 if argv[-1] in QUICK or argv[1:] == ["-c", "pass"] else 1
                times[name] += [seconds(argv, env, cwd) for _ in range(repeat)]
    finally:
        shutil.rmtree(state, ignore_errors=True)
    base = statistics.median(times["python -c pass"])
    floor = min(times["python -c pass"])
    rows = {name: {"median_s": round(statistics.median(t), 4), "min_s": round(min(t), 4), "runs": len(t),
                   "x_python": round(statistics.median(t) / base, 1),
                   "x_python_min": round(min(t) / floor, 1)} for name, t in times.items()}
    result = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "bytecode_cached": not args.no_pyc,
              "load_1min": round(os.getloadavg()[0], 2), "commands": rows,
              "help_under_0_2_s": rows["diagagent --help"]["median_s"] < 0.2}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"python {result['python']}, {result['cpus']} cpus, load {result['load_1min']} (1 min), bytecode "
          f"{'cached' if result['bytecode_cached'] else 'compiled on every run (--no-pyc)'}")
    print(f"{'command':<38} {'median s':>9} {'min s':>8} {'runs':>5} {'x python -c pass':>17} "
          f"{'(min/min)':>10}")
    for name, r in rows.items():
        print(f"{name:<38} {r['median_s']:>9.3f} {r['min_s']:>8.3f} {r['runs']:>5} {r['x_python']:>17.1f} "
              f"{r['x_python_min']:>10.1f}")
    print(f"diagagent --help under 0.2 s: {'yes' if result['help_under_0_2_s'] else 'no'}")


if __name__ == "__main__":
    main()
