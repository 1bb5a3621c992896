"""HF accelerate on 4 nodes: one worker cannot resolve the main process hostname (no timestamps anywhere)."""
import datetime as dt
import json
import random

from common import Bundle, job_yaml, ts

ID = "accelerate-dns-worker-cannot-resolve-head"
MASTER = "trn-head-0.usc1.train.internal"
HOSTS = [("trn-head-0", "10.128.4.10"), ("trn-wk-1", "10.128.4.11"), ("trn-wk-2", "10.128.4.12"), ("trn-wk-3", "10.128.4.13")]
BAD = 2
SP = "/opt/conda/lib/python3.10/site-packages"


def preamble():
    return ["The following values were not passed to `accelerate launch` and had defaults used instead:",
            "\t`--dynamo_backend` was set to a value of `'no'`",
            "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.",
            "WARNING:torch.distributed.run:",
            "*****************************************",
            "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
            "*****************************************"]


def healthy(node, r):
    L = preamble()
    if node == 0:
        L.append("INFO:__main__:Distributed environment: DistributedType.MULTI_GPU  Backend: nccl")
        L += ["Num processes: 32", "Process index: 0", "Local process index: 0", "Device: cuda:0", "",
              "Mixed precision type: bf16", ""]
        L.append(f"'(ReadTimeoutError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. (read timeout=10)\"), '(Request ID: {r.getrandbits(128):032x})')' thrown while requesting HEAD https://huggingface.co/meta-llama/Llama-2-13b-hf/resolve/main/config.json")
        L.append("WARNING:huggingface_hub.utils._http:Retrying in 1s [Retry 1/5].")
        L.append("INFO:__main__:Loading model meta-llama/Llama-2-13b-hf")
    for lr in range(8):
        L.append(f"{SP}/transformers/utils/generic.py:441: UserWarning: torch.utils._pytree._register_pytree_node is deprecated. Please use torch.utils._pytree.register_pytree_node instead.")
        L.append("  _torch_pytree._register_pytree_node(")
    L.append("Loading checkpoint shards: 100%|##########| 3/3 [00:21<00:00,  7.02s/it]")
    if node == 0:
        L.append("INFO:__main__:Resuming from checkpoint /mnt/shared/ckpt/llama2-13b-sft/step_3000")
        L.append("INFO:accelerate.accelerator:Loading states from /mnt/shared/ckpt/llama2-13b-sft/step_3000")
        L.append("INFO:accelerate.checkpointing:All model weights loaded successfully")
        L.append("INFO:accelerate.checkpointing:All optimizer states loaded successfully")
        L.append("INFO:accelerate.checkpointing:All scheduler states loaded successfully")
        L.append("INFO:accelerate.checkpointing:All dataloader sampler states loaded successfully")
        L.append("INFO:accelerate.checkpointing:All random states loaded successfully")
        L.append("INFO:accelerate.accelerator:Loading in 0 custom states")
        L.append("INFO:__main__:***** Running training *****")
        L.append("INFO:__main__:  Num examples = 412816")
        L.append("INFO:__main__:  Instantaneous batch size per device = 4")
        L.append("INFO:__main__:  Gradient Accumulation steps = 4")
        L.append("INFO:__main__:  Total optimization steps = 3225")
    # hangs in the first collective, then the JobSet tears the pods down
    L.append("WARNING:torch.distributed.elastic.agent.server.api:Received Signals.SIGTERM death signal, shutting down workers")
    base = 4100 + node * 37
    for lr in range(8):
        L.append(f"WARNING:torch.distributed.elastic.multiprocessing.api:Sending process {base + lr} closing signal SIGTERM")
    L += ["Traceback (most recent call last):",
          '  File "/opt/conda/bin/accelerate", line 8, in <module>',
          "    sys.exit(main())",
          f'  File "{SP}/accelerate/commands/accelerate_cli.py", line 47, in main',
          "    args.func(args)",
          f'  File "{SP}/accelerate/commands/launch.py", line 1008, in launch_command',
          "    multi_gpu_launcher(args)",
          f'  File "{SP}/accelerate/commands/launch.py", line 666, in multi_gpu_launcher',
          "    distrib_run.run(args)",
          f'  File "{SP}/torch/distributed/run.py", line 797, in run',
          "    elastic_launch(",
          f'  File "{SP}/torch/distributed/launcher/api.py", line 134, in __call__',
          "    return launch_agent(self._config, self._entrypoint, list(args))",
          f'  File "{SP}/torch/distributed/launcher/api.py", line 255, in launch_agent',
          "    result = agent.run()",
          f'  File "{SP}/torch/distributed/elastic/metrics/api.py", line 124, in wrapper',
          "    result = f(*args, **kwargs)",
          f'  File "{SP}/torch/distributed/elastic/agent/server/api.py", line 736, in run',
          "    result = self._invoke_run(role)",
          f'  File "{SP}/torch/distributed/elastic/agent/server/api.py", line 877, in _invoke_run',
          "    time.sleep(monitor_interval)",
          f'  File "{SP}/torch/distributed/elastic/multiprocessing/api.py", line 62, in _terminate_process_handler',
          "    raise SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)",
          f"torch.distributed.elastic.multiprocessing.api.SignalException: Process {4060 + node * 37} got signal: 15"]
    return L


def faulty():
    L = preamble()
    for i in range(23):
        L.append(f"[W socket.cpp:663] [c10d] The IPv6 network addresses of ({MASTER}, 29500) cannot be retrieved (gai error: -3 - Temporary failure in name resolution).")
        L.append(f"[W socket.cpp:663] [c10d] The IPv4 network addresses of ({MASTER}, 29500) cannot be retrieved (gai error: -3 - Temporary failure in name resolution).")
    L.append(f"[E socket.cpp:719] [c10d] The client socket has timed out after 900s while trying to connect to ({MASTER}, 29500).")
    L += ["Traceback (most recent call last):",
          '  File "/opt/conda/bin/accelerate", line 8, in <module>',
          "    sys.exit(main())",
          f'  File "{SP}/accelerate/commands/accelerate_cli.py", line 47, in main',
          "    args.func(args)",
          f'  File "{SP}/accelerate/commands/launch.py", line 1008, in launch_command',
          "    multi_gpu_launcher(args)",
          f'  File "{SP}/accelerate/commands/launch.py", line 666, in multi_gpu_launcher',
          "    distrib_run.run(args)",
          f'  File "{SP}/torch/distributed/run.py", line 797, in run',
          "    elastic_launch(",
          f'  File "{SP}/torch/distributed/launcher/api.py", line 134, in __call__',
          "    return launch_agent(self._config, self._entrypoint, list(args))",
          f'  File "{SP}/torch/distributed/launcher/api.py", line 255, in launch_agent',
          "    result = agent.run()",
          f'  File "{SP}/torch/distributed/elastic/metrics/api.py", line 124, in wrapper',
          "    result = f(*args, **kwargs)",
          f'  File "{SP}/torch/distributed/elastic/agent/server/api.py", line 736, in run',
          "    result = self._invoke_run(role)",
          f'  File "{SP}/torch/distributed/elastic/agent/server/api.py", line 871, in _invoke_run',
          "    self._initialize_workers(self._worker_group)",
          f'  File "{SP}/torch/distributed/elastic/metrics/api.py", line 124, in wrapper',
          "    result = f(*args, **kwargs)",
          f'  File "{SP}/torch/distributed/elastic/agent/server/api.py", line 705, in _initialize_workers',
          "    self._rendezvous(worker_group)",
          f'  File "{SP}/torch/distributed/elastic/metrics/api.py", line 124, in wrapper',
          "    result = f(*args, **kwargs)",
          f'  File "{SP}/torch/distributed/elastic/agent/server/api.py", line 546, in _rendezvous',
          "    store, group_rank, group_world_size = spec.rdzv_handler.next_rendezvous()",
          f'  File "{SP}/torch/distributed/elastic/rendezvous/static_tcp_rendezvous.py", line 54, in next_rendezvous',
          "    self._store = TCPStore(  # type: ignore[call-arg]",
          f"torch.distributed.DistNetworkError: The client socket has timed out after 900s while trying to connect to ({MASTER}, 29500)."]
    return L


def build(root):
    b = Bundle(root, ID)
    r = random.Random(5)
    t0 = dt.datetime(2026, 11, 19, 6, 30, 0)
    for i, (host, ip) in enumerate(HOSTS):
        b.add(f"logs/{host}/accelerate-launch.log", faulty() if i == BAD else healthy(i, r))
        if i == BAD:
            probe = {"probe": "dns", "status": "fail",
                     "detail": f"getent hosts {MASTER} -> exit 2 after 10.0s; /etc/resolv.conf: nameserver 169.254.20.10 (node-local-dns); ;; connection timed out; no servers could be reached",
                     "metrics": {"resolver": "169.254.20.10", "lookup_ms": None, "node_local_dns_active": False}}
        else:
            probe = {"probe": "dns", "status": "ok",
                     "detail": f"getent hosts {MASTER} -> 10.128.4.10 in {r.randint(1, 4)} ms; nameserver 169.254.20.10 (node-local-dns)",
                     "metrics": {"resolver": "169.254.20.10", "lookup_ms": r.randint(1, 4), "node_local_dns_active": True}}
        b.add(f"probes/{host}/dns.json", [json.dumps(probe)])
        b.add(f"probes/{host}/systemd-node-local-dns.txt", [
            f"{ts(t0, -600).strftime('%b %d %H:%M:%S')} {host} systemd[1]: Started node-local-dns.service - NodeLocal DNS cache.",
        ] + ([
            f"{ts(t0, -240).strftime('%b %d %H:%M:%S')} {host} node-cache[2291]: [FATAL] plugin/loop: Loop (169.254.20.10:47791 -> 169.254.20.10:53) detected for zone \".\", see https://coredns.io/plugins/loop#troubleshooting. Query: \"HINFO 6185218311519046432.8432097771251412061.\"",
            f"{ts(t0, -240).strftime('%b %d %H:%M:%S')} {host} systemd[1]: node-local-dns.service: Main process exited, code=exited, status=1/FAILURE",
            f"{ts(t0, -240).strftime('%b %d %H:%M:%S')} {host} systemd[1]: node-local-dns.service: Failed with result 'exit-code'.",
            f"{ts(t0, -230).strftime('%b %d %H:%M:%S')} {host} systemd[1]: node-local-dns.service: Scheduled restart job, restart counter is at 5.",
            f"{ts(t0, -230).strftime('%b %d %H:%M:%S')} {host} systemd[1]: node-local-dns.service: Start request repeated too quickly.",
            f"{ts(t0, -230).strftime('%b %d %H:%M:%S')} {host} systemd[1]: node-local-dns.service: Failed with result 'exit-code'.",
        ] if i == BAD else []))
    bad = "logs/trn-wk-2/accelerate-launch.log"
    b.mark(bad, "(gai error: -3 - Temporary failure in name resolution)")
    b.mark(bad, "torch.distributed.DistNetworkError: The client socket has timed out")
    b.mark("probes/trn-wk-2/dns.json", '"status": "fail"')
    b.mark("probes/trn-wk-2/systemd-node-local-dns.txt", "plugin/loop: Loop")
    nodes = [(h, ip, list(range(i * 8, i * 8 + 8))) for i, (h, ip) in enumerate(HOSTS)]
    y = job_yaml("sft-l2-13b-0419", "llama2-13b-sft", "other", "failed", t0, ts(t0, 1002), 1, 8,
                 (1, 1, 32, 1), nodes,
                 [("a90c4e2", dt.datetime(2026, 11, 12, 11, 5), "sft: packing + flash-attn2"),
                  ("f3b81d7", dt.datetime(2026, 11, 16, 17, 48), "sft: cosine schedule, warmup 100")],
                 [(2000, dt.datetime(2026, 11, 18, 21, 14), "/mnt/shared/ckpt/llama2-13b-sft/step_2000", True),
                  (3000, dt.datetime(2026, 11, 19, 1, 52), "/mnt/shared/ckpt/llama2-13b-sft/step_3000", True)],
                 extra={"scheduler": "kubernetes-jobset", "launcher": "accelerate launch --multi_gpu --num_machines 4 --main_process_ip trn-head-0.usc1.train.internal --main_process_port 29500",
                        "history": "[sft-l2-13b-0418]"})
    truth = {"fault": "dns_resolution_failure", "category": "infrastructure",
             "root_cause": "the node-local DNS cache on trn-wk-2 crashed (CoreDNS loop plugin FATAL) so the accelerate/torchrun agent there could not resolve the main process host trn-head-0.usc1.train.internal (gai error -3) and timed out after 900s; the other 24 ranks hung waiting for it until the JobSet was torn down",
             "faulty_nodes": ["trn-wk-2"], "stage": "init", "iteration": None,
             "actions": [{"kind": "evict", "nodes": ["trn-wk-2"]}, {"kind": "restart", "from_step": 3000}]}
    return b.write(y, truth)
