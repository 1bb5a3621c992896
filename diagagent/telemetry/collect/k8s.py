"""`collect k8s NAMESPACE/NAME`: a bundle from a Kubeflow PyTorchJob, a JobSet or a batch Job, through `kubectl`.

Pods, every container's logs (and the previous run's of a restarted one), events, and each node's conditions; the
user's kubeconfig and context are used as they are, and nothing of them is stored.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

from diagagent.telemetry.collect.runner import CollectError, Runner
from diagagent.telemetry.collect.slurm import CollectResult
from diagagent.telemetry.collect.writer import BundleWriter

# DNS-1123 names, as Kubernetes requires of namespaces and of these objects
NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
KINDS: dict[str, tuple[str, str]] = {  # kind -> (API collection path, label that marks its pods)
    "pytorchjob": ("/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs", "training.kubeflow.org/job-name"),
    "jobset": ("/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets", "jobset.sigs.k8s.io/jobset-name"),
    "job": ("/apis/batch/v1/namespaces/{ns}/jobs", "job-name"),
}
BAD_CONDITIONS = {"MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"}


def parse_ref(ref: str, default_namespace: str = "default") -> tuple[str | None, str, str]:
    """`[KIND/]NAMESPACE/NAME` or `NAME` -> (kind or None, namespace, name); CollectError if it is not one."""
    parts = ref.strip().split("/")
    kind = parts.pop(0).lower() if len(parts) == 3 else None
    if kind is not None and kind not in KINDS:
        raise CollectError(f"{ref!r}: unknown kind {kind!r}; one of {', '.join(KINDS)}")
    ns, name = (parts if len(parts) == 2 else [default_namespace, *parts])[-2:] if len(parts) in (1, 2) else ("", "")
    for what, value in (("namespace", ns), ("name", name)):
        if not NAME.match(value):
            raise CollectError(f"{ref!r}: expected NAMESPACE/NAME (lower-case letters, digits, '-', '.'); "
                               f"the {what} is {value!r}")
    return kind, ns, name


class K8sCollector:
    """Reads one job through `kubectl get --raw` with the user's kubeconfig (KUBECONFIG, --context as given)."""

    def __init__(self, runner: Runner | None = None, context: str | None = None,
                 max_log_bytes: int = 256 << 20) -> None:
        self.runner = runner or Runner()
        self.context = context
        self.max_log_bytes = max_log_bytes

    def _argv(self, path: str) -> list[str]:
        return ["kubectl", *([f"--context={self.context}"] if self.context else []), "--request-timeout=60s",
                "get", "--raw", path]

    def get(self, path: str, *, missing_ok: bool = False) -> dict[str, Any] | None:
        proc = self.runner.run(self._argv(path), check=False)
        if proc.returncode != 0:
            said = proc.stderr.decode("utf-8", errors="replace")
            if missing_ok and ("NotFound" in said or "not found" in said or "404" in said):
                return None
            raise CollectError(f"`kubectl get --raw {path}` failed: {said.strip().splitlines()[-1:] or ['?']}")
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError as exc:
            raise CollectError(f"`kubectl get --raw {path}`: not JSON ({exc.msg} at byte {exc.pos})") from exc
        if not isinstance(data, dict):
            raise CollectError(f"`kubectl get --raw {path}`: expected a JSON object")
        return data

    def find(self, kind: str | None, ns: str, name: str) -> tuple[str, dict[str, Any]]:
        """The job object: of the given kind, else whichever kind has it (an error if none, or several, do)."""
        found = []
        for k in [kind] if kind else list(KINDS):
            obj = self.get(KINDS[k][0].format(ns=ns) + "/" + name, missing_ok=True)
            if obj is not None:
                found.append((k, obj))
        if not found:
            raise CollectError(f"no {kind or 'PyTorchJob, JobSet or Job'} named {name!r} in namespace {ns!r}")
        if len(found) > 1:
            raise CollectError(f"{ns}/{name} names several jobs: {', '.join(f'{k}/{ns}/{name}' for k, _ in found)}; "
                               "give the kind (KIND/NAMESPACE/NAME)")
        return found[0]

    def list_jobs(self, ns: str) -> list[tuple[str, dict[str, Any]]]:
        out = []
        for kind, (path, _) in KINDS.items():
            data = self.get(path.format(ns=ns), missing_ok=True) or {}
            out += [(kind, item) for item in data.get("items") or [] if isinstance(item, dict)]
        return out

    def collect(self, ref: str, dest: Path, default_namespace: str = "default") -> CollectResult:
        kind, ns, name = parse_ref(ref, default_namespace)
        kind, obj = self.find(kind, ns, name)
        with BundleWriter(dest) as writer:
            result = self._write(kind, ns, name, obj, writer)
        result.commands = list(self.runner.ran)
        return result

    def _write(self, kind: str, ns: str, name: str, obj: dict[str, Any], writer: BundleWriter) -> CollectResult:
        writer.write_raw(f"{kind}.json", json.dumps(obj, indent=1).encode())
        selector = urllib.parse.quote(f"{KINDS[kind][1]}={name}", safe="")
        pods_doc = self.get(f"/api/v1/namespaces/{ns}/pods?labelSelector={selector}") or {}
        pods = sorted((p for p in pods_doc.get("items") or [] if isinstance(p, dict)), key=_pod_order)
        writer.write_raw("pods.json", json.dumps(pods_doc, indent=1).encode())
        if not pods:
            writer.note(f"no pods carry {KINDS[kind][1]}={name} (deleted with the job, or not scheduled yet)")
        node_of_pod: dict[str, str] = {}
        hosts: list[str] = []
        exit_codes: list[int] = []
        gpus = 0
        for pod in pods:
            meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
            pod_name = str(meta.get("name", "pod"))
            host = str(spec.get("nodeName") or pod_name)
            node_of_pod[pod_name] = host
            if host not in hosts:
                hosts.append(host)
            for c in spec.get("containers") or []:
                limits = ((c.get("resources") or {}).get("limits") or {})
                gpus = max(gpus, _int(limits.get("nvidia.com/gpu")))
            for cs in status.get("containerStatuses") or []:
                for state in (cs.get("state") or {}, cs.get("lastState") or {}):
                    code = (state.get("terminated") or {}).get("exitCode")
                    if isinstance(code, int) and code != 0:
                        exit_codes.append(code)
                self._logs(writer, ns, pod_name, host, str(cs.get("name")), _int(cs.get("restartCount")))
        self._events(writer, ns, name, node_of_pod)
        for node in dict.fromkeys(str(p.get("spec", {}).get("nodeName")) for p in pods
                                  if (p.get("spec") or {}).get("nodeName")):
            self._node(writer, node)
        status = job_status(obj)
        job = {"job_id": name, "name": name, "framework": "other", "status": status,
               "started_at": (obj.get("status") or {}).get("startTime"),
               "ended_at": (obj.get("status") or {}).get("completionTime") if status != "running" else None,
               "exit_code": exit_codes[0] if exit_codes else None, "gpus_per_node": max(gpus, 1),
               "nodes": [{"host": h} for h in hosts], "collected_from": "k8s",
               "k8s": {"kind": kind, "namespace": ns, "name": name,
                       "pods": {p: n for p, n in node_of_pod.items()}}}
        if gpus == 0:
            writer.note("no container asks for nvidia.com/gpu: ranks per node are not known from the pods")
        writer.write_job({k: v for k, v in job.items() if v is not None})
        return CollectResult(source="k8s", job_id=f"{ns}/{name}", path=str(writer.dest), status=status,
                             hosts=hosts, files=len(writer.files), notes=list(writer.notes))

    def _logs(self, writer: BundleWriter, ns: str, pod: str, host: str, container: str, restarts: int) -> None:
        runs = [("", False)] + ([(".previous", True)] if restarts > 0 else [])
        for suffix, previous in runs:
            query = f"container={urllib.parse.quote(container)}&limitBytes={self.max_log_bytes}" + \
                ("&previous=true" if previous else "")
            target = writer._file("logs", host, f"{pod}.{container}{suffix}.log")
            code, size, said = self.runner.to_file(self._argv(f"/api/v1/namespaces/{ns}/pods/{pod}/log?{query}"),
                                                   target, self.max_log_bytes)
            if code != 0:
                writer.note(f"logs of {pod}/{container}{' (previous run)' if previous else ''}: "
                            + ("cut at the log size limit" if code == -1 else f"kubectl said {said}"))
                if size == 0:
                    target.unlink(missing_ok=True)
                    writer.files.remove(str(target.relative_to(writer.root)))

    def _events(self, writer: BundleWriter, ns: str, name: str, node_of_pod: dict[str, str]) -> None:
        doc = self.get(f"/api/v1/namespaces/{ns}/events", missing_ok=True) or {}
        mine = [e for e in doc.get("items") or [] if isinstance(e, dict)
                and (e.get("involvedObject") or {}).get("name") in {name, *node_of_pod}]
        mine.sort(key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
        writer.write_raw("events.json", json.dumps(mine, indent=1).encode())
        lines: dict[str, list[str]] = {}
        for e in mine:
            obj = e.get("involvedObject") or {}
            host = node_of_pod.get(str(obj.get("name")), next(iter(node_of_pod.values()), "cluster"))
            when = e.get("lastTimestamp") or e.get("eventTime") or e.get("firstTimestamp") or ""
            text = " ".join(str(e.get("message") or "").split())
            count = f" (x{e['count']})" if _int(e.get("count")) > 1 else ""
            lines.setdefault(host, []).append(f"{when} {e.get('type', '')} {e.get('reason', '')} "
                                              f"{str(obj.get('kind', '')).lower()}/{obj.get('name')}: {text}{count}")
        for host, entries in lines.items():
            writer.write_log(host, "k8s-events.log", "\n".join(entries) + "\n")

    def _node(self, writer: BundleWriter, node: str) -> None:
        try:
            doc = self.get(f"/api/v1/nodes/{urllib.parse.quote(node)}", missing_ok=True)
        except CollectError as exc:
            writer.note(f"node {node}: {exc}")
            return
        if doc is None:
            writer.note(f"node {node}: gone from the cluster (no conditions)")
            return
        conditions = (doc.get("status") or {}).get("conditions") or []
        bad = [c for c in conditions if (c.get("type") == "Ready" and c.get("status") != "True")
               or (c.get("type") != "Ready" and c.get("status") == "True")]
        worst = "fail" if any(c.get("type") == "Ready" or c.get("type") not in BAD_CONDITIONS for c in bad) \
            else ("warn" if bad else "ok")
        detail = "; ".join(f"{c.get('type')}={c.get('status')} ({c.get('reason', '')}: "
                           f"{' '.join(str(c.get('message', '')).split())[:300]})" for c in bad) or "all conditions ok"
        writer.write_probe_json(node, "k8s-node-conditions", {
            "probe": "k8s-node-conditions", "status": worst, "detail": detail,
            "metrics": {str(c.get("type")): c.get("status") for c in conditions}})


def job_status(obj: dict[str, Any]) -> str:
    """failed | succeeded | running from the job's conditions (the latest one that is True)."""
    conditions = [c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("status") == "True"]
    types = {str(c.get("type")) for c in conditions}
    if "Failed" in types:
        return "failed"
    if types & {"Succeeded", "Complete", "Completed"}:
        return "succeeded"
    return "running"


def _pod_order(pod: dict[str, Any]) -> tuple[int, int, str]:
    """Master first, then workers by index (torchrun's node rank order), then by name."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    role = str(labels.get("training.kubeflow.org/replica-type", "")).lower()
    index = _int(labels.get("training.kubeflow.org/replica-index") or labels.get("jobset.sigs.k8s.io/job-index")
                 or labels.get("batch.kubernetes.io/job-completion-index"))
    return (0 if role == "master" else 1, index, str((pod.get("metadata") or {}).get("name", "")))


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


__all__ = ["KINDS", "K8sCollector", "job_status", "parse_ref"]
