"""A small Kubernetes API server on loopback for the real `kubectl`: it serves the recorded JSON and logs of a failed
PyTorchJob (tests/fixtures/k8s) at the paths the API has, 404 Status objects elsewhere, and keeps each request."""

from __future__ import annotations

import json
import shutil
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "k8s"
NS, JOB = "ml", "llama-ft"


def _routes() -> dict[str, tuple[str, bytes]]:
    pods = (FIXTURES / "pods.json").read_bytes()
    routes = {
        f"/apis/kubeflow.org/v1/namespaces/{NS}/pytorchjobs/{JOB}": (FIXTURES / "pytorchjob.json").read_bytes(),
        f"/apis/kubeflow.org/v1/namespaces/{NS}/pytorchjobs": json.dumps(
            {"kind": "PyTorchJobList", "items": [json.loads((FIXTURES / "pytorchjob.json").read_bytes())]}).encode(),
        f"/api/v1/namespaces/{NS}/pods?labelSelector=training.kubeflow.org/job-name={JOB}": pods,
        f"/api/v1/namespaces/{NS}/events": (FIXTURES / "events.json").read_bytes(),
    }
    out = {path: ("application/json", body) for path, body in routes.items()}
    for node in FIXTURES.glob("node-*.json"):
        out[f"/api/v1/nodes/{node.stem.removeprefix('node-')}"] = ("application/json", node.read_bytes())
    for log in (FIXTURES / "logs").glob("*.log"):
        pod, container, *rest = log.name.removesuffix(".log").split(".")
        previous = "&previous=true" if rest == ["previous"] else ""
        out[f"/api/v1/namespaces/{NS}/pods/{pod}/log?container={container}{previous}"] = ("text/plain", log.read_bytes())
    return out


class KubeAPI:
    def __init__(self) -> None:
        self.routes = _routes()
        self.requests: list[str] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                query = [(k, v) for k, v in urllib.parse.parse_qsl(url.query) if k not in ("limitBytes", "timeout")]
                key = url.path + ("?" + "&".join(f"{k}={v}" for k, v in query) if query else "")
                api.requests.append(key)
                kind, body = api.routes.get(key, (None, b""))
                status = 200
                if kind is None:
                    status, kind = 404, "application/json"
                    body = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                                       "message": f"the server could not find the requested resource ({url.path})",
                                       "code": 404}).encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def kubeconfig(self, path: Path) -> Path:
        path.write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: recorded
  cluster: {{server: "{self.url}"}}
contexts:
- name: recorded
  context: {{cluster: recorded, user: tester, namespace: {NS}}}
current-context: recorded
users:
- name: tester
  user: {{token: not-a-secret}}
""", encoding="utf-8")
        return path


@contextmanager
def kube_api() -> Iterator[KubeAPI]:
    api = KubeAPI()
    thread = threading.Thread(target=api.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        api.server.shutdown()
        api.server.server_close()


def need_kubectl() -> str:
    path = shutil.which("kubectl")
    if path is None:
        pytest.skip("kubectl is not installed (Debian: apt-get install kubernetes-client, as .ci/system_packages.sh does)")
    return path
