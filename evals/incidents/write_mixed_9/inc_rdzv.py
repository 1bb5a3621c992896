"""torchtitan under Slurm (srun --label, one output file per node) + site epilog:
one node's new nftables egress rule drops the c10d rendezvous port."""
import datetime as dt

from common import Bundle, job_yaml, ts

ID = "slurm-titan-rdzv-nft-egress-drop"
HOSTS = [("h100-r3-01", "10.20.3.1"), ("h100-r3-02", "10.20.3.2"), ("h100-r3-03", "10.20.3.3"), ("h100-r3-04", "10.20.3.4")]
BAD = 2
VP = "/opt/venv/lib/python3.11/site-packages"
JOB = 88123


def glog(sev, t, pid, where):
    return f"{sev}{t.strftime('%m%d %H:%M:%S')}.{t.microsecond // 1000:03d}000 {pid} {where}] "


def head(task, t, pid, host):
    p = f"{task}: "
    w = glog("W", t, pid, "torch/distributed/run.py:793")
    i = glog("I", t, pid, "torch/distributed/launcher/api.py:194")
    L = [p + w, p + w + "*****************************************",
         p + w + "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
         p + w + "*****************************************",
         p + i + "Starting elastic_operator with launch configs:",
         p + i + "  entrypoint       : -m",
         p + i + "  min_nodes        : 4",
         p + i + "  max_nodes        : 4",
         p + i + "  nproc_per_node   : 8",
         p + i + f"  run_id           : tt-{JOB}",
         p + i + "  rdzv_backend     : c10d",
         p + i + "  rdzv_endpoint    : h100-r3-01:29400",
         p + i + "  rdzv_configs     : {'timeout': 900}",
         p + i + "  max_restarts     : 0",
         p + i + "  monitor_interval : 0.1",
         p + i + "  log_dir          : /tmp/torchelastic_" + ["q1x8fz3c", "m2c0a7d1", "k9v3b2pe", "u7w4n0sa"][task],
         p + i + "  metrics_cfg      : {}",
         p + i]
    return L


def build(root):
    b = Bundle(root, ID)
    t0 = dt.datetime(2026, 11, 20, 8, 11, 58, 402000)
    pids = [201133, 188410, 77120, 140562]
    for task, (host, ip) in enumerate(HOSTS):
        pid = pids[task]
        p = f"{task}: "
        L = head(task, t0, pid, host)
        t1 = ts(t0, 0.4)
        if task == 0:
            L.append(p + glog("I", t1, pid, "torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py:208") + "Process 201133 hosts the TCP store for the C10d rendezvous backend.")
        if task != BAD:
            L.append(p + glog("I", t1, pid, "torch/distributed/elastic/agent/server/local_elastic_agent.py:272") + "log directory set to: /tmp/torchelastic_x/tt-88123_" + ["q1x8fz3c", "m2c0a7d1", "k9v3b2pe", "u7w4n0sa"][task])
            L.append(p + glog("I", t1, pid, "torch/distributed/elastic/agent/server/api.py:859") + "[default] starting workers for entrypoint: python")
            L.append(p + glog("I", t1, pid, "torch/distributed/elastic/agent/server/api.py:672") + "[default] Rendezvous'ing worker group")
            L.append(p + glog("I", ts(t1, 0.2), pid, "torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1127") + f"The node '{host}_{pid}_0' attempts to join the next round of the rendezvous 'tt-{JOB}'.")
            te = ts(t1, 600.3)
            L.append(p + glog("E", te, pid, "torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1134") + f"The node '{host}_{pid}_0' has failed to join the next round of the rendezvous 'tt-{JOB}' within 600 seconds.")
            L += [p + "Traceback (most recent call last):",
                  p + '  File "/opt/venv/bin/torchrun", line 8, in <module>',
                  p + "    sys.exit(main())",
                  p + f'  File "{VP}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
                  p + "    return f(*args, **kwargs)",
                  p + f'  File "{VP}/torch/distributed/run.py", line 919, in main',
                  p + "    run(args)",
                  p + f'  File "{VP}/torch/distributed/run.py", line 910, in run',
                  p + "    elastic_launch(",
                  p + f'  File "{VP}/torch/distributed/launcher/api.py", line 138, in __call__',
                  p + "    return launch_agent(self._config, self._entrypoint, list(args))",
                  p + f'  File "{VP}/torch/distributed/launcher/api.py", line 260, in launch_agent',
                  p + "    result = agent.run()",
                  p + f'  File "{VP}/torch/distributed/elastic/metrics/api.py", line 137, in wrapper',
                  p + "    result = f(*args, **kwargs)",
                  p + f'  File "{VP}/torch/distributed/elastic/agent/server/api.py", line 696, in run',
                  p + "    result = self._invoke_run(role)",
                  p + f'  File "{VP}/torch/distributed/elastic/agent/server/api.py", line 849, in _invoke_run',
                  p + "    self._initialize_workers(self._worker_group)",
                  p + f'  File "{VP}/torch/distributed/elastic/metrics/api.py", line 137, in wrapper',
                  p + "    result = f(*args, **kwargs)",
                  p + f'  File "{VP}/torch/distributed/elastic/agent/server/api.py", line 668, in _initialize_workers',
                  p + "    self._rendezvous(worker_group)",
                  p + f'  File "{VP}/torch/distributed/elastic/metrics/api.py", line 137, in wrapper',
                  p + "    result = f(*args, **kwargs)",
                  p + f'  File "{VP}/torch/distributed/elastic/agent/server/api.py", line 500, in _rendezvous',
                  p + "    rdzv_info = spec.rdzv_handler.next_rendezvous()",
                  p + f'  File "{VP}/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 1162, in next_rendezvous',
                  p + "    self._op_executor.run(join_op, deadline, self._get_deadline)",
                  p + f'  File "{VP}/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 676, in run',
                  p + "    raise RendezvousTimeoutError",
                  p + "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError"]
        else:
            te = ts(t1, 60.1)
            L.append(p + f"[E{te.strftime('%m%d %H:%M:%S')}.{te.microsecond:06d}183 socket.cpp:1011] [c10d] The client socket has timed out after 60000ms while trying to connect to (h100-r3-01, 29400).")
            L += [p + "Traceback (most recent call last):",
                  p + f'  File "{VP}/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 159, in _create_tcp_store',
                  p + "    store = TCPStore(",
                  p + "            ^^^^^^^^^",
                  p + "torch.distributed.DistNetworkError: The client socket has timed out after 60000ms while trying to connect to (h100-r3-01, 29400).",
                  p, p + "The above exception was the direct cause of the following exception:", p,
                  p + "Traceback (most recent call last):",
                  p + '  File "/opt/venv/bin/torchrun", line 8, in <module>',
                  p + "    sys.exit(main())",
                  p + "             ^^^^^^",
                  p + f'  File "{VP}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
                  p + "    return f(*args, **kwargs)",
                  p + f'  File "{VP}/torch/distributed/run.py", line 919, in main',
                  p + "    run(args)",
                  p + f'  File "{VP}/torch/distributed/run.py", line 910, in run',
                  p + "    elastic_launch(",
                  p + f'  File "{VP}/torch/distributed/launcher/api.py", line 138, in __call__',
                  p + "    return launch_agent(self._config, self._entrypoint, list(args))",
                  p + f'  File "{VP}/torch/distributed/launcher/api.py", line 233, in launch_agent',
                  p + "    rdzv_handler=rdzv_registry.get_rendezvous_handler(rdzv_parameters),",
                  p + f'  File "{VP}/torch/distributed/elastic/rendezvous/registry.py", line 82, in get_rendezvous_handler',
                  p + "    return handler_registry.create_handler(params)",
                  p + f'  File "{VP}/torch/distributed/elastic/rendezvous/api.py", line 367, in create_handler',
                  p + "    handler = creator(params)",
                  p + f'  File "{VP}/torch/distributed/elastic/rendezvous/registry.py", line 43, in _create_c10d_handler',
                  p + "    backend, store = create_backend(params)",
                  p + f'  File "{VP}/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 258, in create_backend',
                  p + "    store = _create_tcp_store(params)",
                  p + f'  File "{VP}/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 183, in _create_tcp_store',
                  p + "    raise RendezvousConnectionError(",
                  p + "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details."]
        b.add(f"logs/{host}/slurm-{JOB}-{host}.out", L)
    # batch script output (on the first node)
    B = ["+ export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7",
         "+ export NCCL_SOCKET_IFNAME=bond0",
         "+ export LOGLEVEL=INFO",
         "+ export CONFIG_FILE=./torchtitan/models/llama3/train_configs/llama3_70b.toml",
         "++ scontrol show hostnames 'h100-r3-[01-04]'",
         "++ head -n 1",
         "+ head_node=h100-r3-01",
         "+ srun --label --output=slurm-%j-%N.out torchrun --nnodes 4 --nproc_per_node 8 --rdzv_id tt-88123 --rdzv_backend c10d --rdzv_endpoint h100-r3-01:29400 -m torchtitan.train --job.config_file ./torchtitan/models/llama3/train_configs/llama3_70b.toml --checkpoint.enable_checkpoint --checkpoint.folder /lustre/ckpt/l3-70b-tt",
         "srun: error: h100-r3-03: task 2: Exited with exit code 1",
         "srun: error: h100-r3-01: task 0: Exited with exit code 1",
         "srun: error: h100-r3-04: task 3: Exited with exit code 1",
         "srun: error: h100-r3-02: task 1: Exited with exit code 1"]
    b.add(f"logs/h100-r3-01/slurm-{JOB}.out", B)
    # probes: nft ruleset and the site epilog's journal
    for i, (host, ip) in enumerate(HOSTS):
        nft = ["table inet filter {",
               "\tchain input {",
               "\t\ttype filter hook input priority filter; policy accept;",
               "\t\tct state established,related accept",
               "\t\tiifname \"lo\" accept",
               "\t\ttcp dport 22 accept",
               "\t}",
               "\tchain forward {",
               "\t\ttype filter hook forward priority filter; policy accept;",
               "\t}",
               "\tchain output {",
               "\t\ttype filter hook output priority filter; policy accept;"]
        if i == BAD:
            nft += ["\t\tip daddr 10.20.0.0/16 tcp dport 29400-29500 counter packets 61 bytes 3660 drop comment \"secpol-2026.11.3: block legacy svc range\"",
                    "\t\tip daddr 10.20.0.0/16 tcp dport 8086 counter packets 0 bytes 0 drop"]
        nft += ["\t}", "}"]
        b.add(f"probes/{host}/nft-ruleset.txt", nft)
        te = ts(t0, 640 + i * 3)
        s = te.strftime("%b %d %H:%M:%S")
        ep = [f"{s} {host} slurm-epilog[{99100 + i * 7}]: job={JOB} user=mli uid=41207 begin",
              f"{s} {host} slurm-epilog[{99100 + i * 7}]: gpu: 8/8 visible, persistence on, no Xid since job start",
              f"{s} {host} slurm-epilog[{99100 + i * 7}]: ib: mlx5_0..mlx5_7 Active/LinkUp 400 Gb/sec",
              f"{s} {host} slurm-epilog[{99100 + i * 7}]: shm: removed 0 stale segments"]
        if i == BAD:
            ep.append(f"{s} {host} slurm-epilog[{99100 + i * 7}]: nft: ruleset differs from golden image (golden sha256 3f0c9e1a.., running 9ab14d77..), applied by ansible run 2026-11-20T06:02Z tag secpol-2026.11.3")
        ep.append(f"{s} {host} slurm-epilog[{99100 + i * 7}]: job={JOB} end rc=0")
        b.add(f"probes/{host}/slurm-epilog.txt", ep)
    bad = f"logs/h100-r3-03/slurm-{JOB}-h100-r3-03.out"
    b.mark(bad, "[c10d] The client socket has timed out after 60000ms")
    b.mark(bad, "RendezvousConnectionError: The connection to the C10d store has failed")
    b.mark("probes/h100-r3-03/nft-ruleset.txt", "tcp dport 29400-29500")
    b.mark("probes/h100-r3-03/slurm-epilog.txt", "nft: ruleset differs")
    nodes = [(h, ip, list(range(i * 8, i * 8 + 8))) for i, (h, ip) in enumerate(HOSTS)]
    y = job_yaml(str(JOB), "llama3-70b-titan", "torchtitan", "failed", ts(t0, -2), ts(t0, 646), 1, 8,
                 (8, 1, 4, 1), nodes,
                 [("c41e0b8", dt.datetime(2026, 11, 13, 14, 20), "titan: fp8 rowwise for mlp"),
                  ("2d9f7a1", dt.datetime(2026, 11, 18, 10, 2), "titan: async tp on")],
                 [(5500, dt.datetime(2026, 11, 19, 22, 40), "/lustre/ckpt/l3-70b-tt/step-5500", True),
                  (6000, dt.datetime(2026, 11, 20, 2, 15), "/lustre/ckpt/l3-70b-tt/step-6000", True)],
                 extra={"scheduler": "slurm", "history": "[88011, 88054]"})
    truth = {"fault": "rendezvous_timeout", "category": "infrastructure",
             "root_cause": "an nftables egress rule pushed to h100-r3-03 that morning (secpol-2026.11.3) drops TCP 29400-29500 toward 10.20.0.0/16, so its torchrun agent could not reach the c10d rendezvous store on h100-r3-01:29400 (RendezvousConnectionError after 60s) and the other three nodes timed out waiting for the 4th node (RendezvousTimeoutError after 600s)",
             "faulty_nodes": ["h100-r3-03"], "stage": "init", "iteration": None,
             "actions": [{"kind": "evict", "nodes": ["h100-r3-03"]}, {"kind": "restart", "from_step": 6000}]}
    return b.write(y, truth)
