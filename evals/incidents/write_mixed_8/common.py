"""Shared helpers for the hand-written incident bundles (stdlib only)."""
import datetime as _dt
import json
import re
import os
import random


class Bundle:
    """Collects the files of one bundle in memory, remembers line numbers of marked lines."""

    def __init__(self, out_dir, seed=0):
        self.out = out_dir
        self.files = {}          # relpath -> list[str]
        self.marks = []          # (relpath, line)
        self.rng = random.Random(seed)

    def add(self, path, text, mark=False):
        """Append one line (text must not contain a newline except a tqdm \\r). Returns its 1-based number."""
        lines = self.files.setdefault(path, [])
        lines.append(text)
        n = len(lines)
        if mark:
            self.marks.append((path, n))
        return n

    def extend(self, path, texts):
        for t in texts:
            self.add(path, t)

    def find(self, path, needle, nth=1):
        """1-based line number of the nth line of path that contains needle."""
        k = 0
        for i, t in enumerate(self.files[path], 1):
            if needle in t:
                k += 1
                if k == nth:
                    return i
        raise KeyError(f"{needle!r} not in {path}")

    def mark_find(self, path, needle, nth=1):
        n = self.find(path, needle, nth)
        self.marks.append((path, n))
        return n

    def write(self, job_yaml, truth, raw_tail=None):
        os.makedirs(self.out, exist_ok=True)
        for rel, lines in self.files.items():
            p = os.path.join(self.out, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            data = "\n".join(lines) + "\n"
            if raw_tail and rel in raw_tail:          # a log cut off mid-line: no final newline
                data = "\n".join(lines)
            with open(p, "w", encoding="utf-8", newline="") as f:
                f.write(data)
        with open(os.path.join(self.out, "job.yaml"), "w") as f:
            f.write(job_yaml)
        # indicating lines come from the marks, checked against what was written
        ind = []
        for rel, n in self.marks:
            lines = self.files[rel]
            assert 1 <= n <= len(lines), (rel, n)
            assert lines[n - 1].strip(), (rel, n, "empty")
            ind.append({"file": rel, "line": n})
        assert 1 <= len(ind) <= 6, len(ind)
        truth = dict(truth)
        truth["indicating_lines"] = ind
        with open(os.path.join(self.out, "truth.json"), "w") as f:
            json.dump(truth, f, indent=2)
            f.write("\n")
        return truth

    def line_text(self, rel, n):
        return self.files[rel][n - 1]


def ts(t0, sec):
    return t0 + _dt.timedelta(seconds=sec)


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339nano(t, rng):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}{rng.randint(0, 999):03d}Z"


def dmesg_T(t):
    # dmesg -T uses ctime(): [Sat Mar  4 09:41:07 2026]
    return f"[{t:%a %b} {t.day:2d} {t:%H:%M:%S %Y}]"


def glog_ts(t):
    # PyTorch c10 glog-ish prefix: E0314 09:51:08.123456789
    return t.strftime("%m%d %H:%M:%S.") + f"{t.microsecond:06d}"


def yaml_job(job):
    """Tiny YAML writer for the flat job.yaml layout (flow maps for list items)."""
    out = []

    def scalar(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if v is None:
            return "null"
        if isinstance(v, (int, float)):
            return str(v)
        s = str(v)
        if re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", s):
            return s
        if s == "" or any(c in s for c in ":#{}[],&*!|>'\"%@`") or s.strip() != s:
            return json.dumps(s)
        return s

    def flow(d):
        parts = []
        for k, v in d.items():
            if isinstance(v, list):
                parts.append(f"{k}: [" + ", ".join(scalar(x) for x in v) + "]")
            else:
                parts.append(f"{k}: {scalar(v)}")
        return "{" + ", ".join(parts) + "}"

    for k, v in job.items():
        if isinstance(v, list):
            out.append(f"{k}:")
            for item in v:
                out.append(f"  - {flow(item) if isinstance(item, dict) else scalar(item)}")
        elif isinstance(v, dict):
            out.append(f"{k}: {flow(v)}")
        elif k == "job_id":
            out.append(f'{k}: "{v}"')
        else:
            out.append(f"{k}: {scalar(v)}")
    return "\n".join(out) + "\n"


def nccl_init_lines(host, pid, tid, dev, ip, ifname="ens8f0", ver="2.21.5", hcas=8):
    p = f"{host}:{pid}:{tid} [{dev}] NCCL INFO "
    ib = " ".join(f"[{i}]mlx5_{i}:1/IB" for i in range(hcas))
    return [
        p + f"Bootstrap : Using {ifname}:{ip}<0>",
        p + "NET/Plugin: No plugin found (libnccl-net.so)",
        p + f"NET/IB : Using {ib} ; OOB {ifname}:{ip}<0>",
        p + "Using non-device net plugin version 0",
        p + "Using network IB",
        p + "cudaDriverVersion 12040",
    ] + ([p + f"NCCL version {ver}+cuda12.4"] if dev == 0 else [])


def torchrun_child_failed(script, when, host, failures, first):
    """torch.distributed.elastic ChildFailedError summary block.

    failures: list of dicts {rank, local_rank, exitcode, pid, error_file, traceback}; first: same for root cause.
    """
    L = ["Traceback (most recent call last):",
         '  File "/usr/local/bin/torchrun", line 8, in <module>',
         "    sys.exit(main())",
         '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
         "    return f(*args, **kwargs)",
         '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/run.py", line 919, in main',
         "    run(args)",
         '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/run.py", line 910, in run',
         "    elastic_launch(",
         '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/launcher/api.py", line 138, in __call__',
         "    return launch_agent(self._config, self._entrypoint, list(args))",
         '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/launcher/api.py", line 269, in launch_agent',
         "    raise ChildFailedError(",
         "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
         "============================================================",
         f"{script} FAILED",
         "------------------------------------------------------------",
         "Failures:"]

    def block(i, f):
        b = [f"[{i}]:",
             f"  time      : {when}",
             f"  host      : {host}",
             f"  rank      : {f['rank']} (local_rank: {f['local_rank']})",
             f"  exitcode  : {f['exitcode']} (pid: {f['pid']})",
             f"  error_file: {f.get('error_file', '<N/A>')}"]
        tb = f.get("traceback")
        if tb is None:
            b.append(f"  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
        elif isinstance(tb, str):
            b.append(f"  traceback : {tb}")
        else:
            b.append(f"  traceback : {tb[0]}")
            b.extend("    " + x for x in tb[1:])
        return b

    if failures:
        for i, f in enumerate(failures, 1):
            L.extend(block(i, f))
    else:
        L.append("  <NO_OTHER_FAILURES>")
    L.append("------------------------------------------------------------")
    L.append("Root Cause (first observed failure):")
    L.extend(block(0, first))
    L.append("============================================================")
    return L


def pyspy_dump(pid, cmd, pyver, pypath, threads):
    """threads: list of (tid, state, name, [frames...])"""
    L = [f"Process {pid}: {cmd}", f"Python v{pyver} ({pypath})", ""]
    for tid, state, name, frames in threads:
        L.append(f'Thread {tid} ({state}): "{name}"')
        L.extend("    " + fr for fr in frames)
    return L
