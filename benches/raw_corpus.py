"""Raw logs vs their bundles on evals/real/dev: the same diagnosis (category, fault, cited texts) with no job.yaml?

Each case's logs/ files are fed raw: cat into one stream on standard input (stream), the logs/ directory (dir), the
stream with --status as the user knows it (status), and the case folder without job.yaml, probes/ too (whole).
`python benches/raw_corpus.py [--cases N] [--json OUT]`. Only dev cases: evals/real/test stays unread.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import tempfile
import time
from pathlib import Path

from diagagent.config import Settings
from diagagent.diagnosis import diagnose
from diagagent.telemetry import Bundle
from diagagent.telemetry.rawlogs import open_inputs

DEV = Path(__file__).resolve().parent.parent / "evals" / "real" / "dev"


def key(d) -> dict:
    return {"category": d.category, "fault": d.fault,
            "cited": sorted({e.text.strip() for e in d.evidence if e.role == "cause" and e.text})}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=0, help="only the first N cases (0: all)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    cases = sorted(p for p in DEV.iterdir() if (p / "job.yaml").is_file())
    cases = cases[:args.cases] if args.cases else cases
    with tempfile.TemporaryDirectory() as state:
        cfg = Settings(state_dir=Path(state))
        rows, t0 = [], time.perf_counter()
        for case in cases:
            logs = sorted(p for p in (case / "logs").rglob("*") if p.is_file()) if (case / "logs").is_dir() else []
            if not logs:
                rows.append({"case": case.name, "skipped": "no logs/ (probes only)"})
                continue
            with Bundle.open(case) as b:
                want = key(diagnose(b, cfg))
            stream = io.BytesIO(b"".join(p.read_bytes() if p.read_bytes().endswith(b"\n") else p.read_bytes() + b"\n"
                                         for p in logs))
            data = stream.getvalue()
            with open_inputs(["-"], Path(state), stdin=stream) as b:
                got_stream = key(diagnose(b, cfg))
            stream = io.BytesIO(data)
            with open_inputs([str(case / "logs")], Path(state)) as b:
                got_dir = key(diagnose(b, cfg))
            status = Bundle.open(case).job.status
            with open_inputs(["-"], Path(state), stdin=stream, status=status) as b:  # --status, as the user knows
                got_status = key(diagnose(b, cfg))
            with tempfile.TemporaryDirectory() as whole:  # the case folder without job.yaml: probes/ read too
                shutil.copytree(case, whole, dirs_exist_ok=True)
                (Path(whole) / "job.yaml").unlink()
                with open_inputs([whole], Path(state), status=status) as b:
                    got_whole = key(diagnose(b, cfg))
            rows.append({"case": case.name, "status": status, "status_same": got_status == want,
                         "whole": got_whole, "whole_same": got_whole == want, "given_status": got_status,
                         "probes": (case / "probes").is_dir(), "hosts": len(list((case / "logs").iterdir())),
                         "bundle": want, "stream": got_stream, "dir": got_dir,
                         "stream_same": got_stream == want, "dir_same": got_dir == want})
            print(f"{case.name:45} " + "  ".join(f"{k} {'same' if rows[-1][k + '_same'] else 'DIFF'}"
                                                  for k in ("stream", "dir", "status", "whole")), flush=True)
        done = [r for r in rows if "bundle" in r]
        print(f"{len(done)} cases with logs ({len(rows) - len(done)} skipped) in {time.perf_counter() - t0:.0f} s: "
              + ", ".join(f"{k} same {sum(r[k + '_same'] for r in done)}" for k in ("stream", "dir", "status", "whole")))
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
