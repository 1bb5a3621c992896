"""torchrun elastic rendezvous timeout: one pod's container (and so its agent) never started.
torchtitan in a Kubeflow PyTorchJob; logs captured with `kubectl logs --all-containers --prefix`."""
from common import Bundle, Ind, hms

IID = "k8s-prefix-torchtitan-rdzv-timeout-4node"
PODS = ["titan-l8b-master-0", "titan-l8b-worker-0", "titan-l8b-worker-1", "titan-l8b-worker-2"]
NODES = ["gpu-b11", "gpu-b12", "gpu-b13", "gpu-b14"]
PODIPS = ["10.244.7.21", "10.244.9.14", "10.244.3.30", "10.244.12.6"]
NODEIPS = ["172.20.4.11", "172.20.4.12", "172.20.4.13", "172.20.4.14"]
BAD = 3
T0 = 14 * 3600 + 31 * 60 + 7
PY = "/usr/local/lib/python3.11/site-packages"


def g(lv, t, pid, src, msg):
    return f"{lv}1127 {hms(t)}.{int(round(t * 1e6)) % 1000000:06d} {pid} {src}] {msg}"


def build(root):
    b = Bundle(root, IID)
    for n, (pod, node) in enumerate(zip(PODS, NODES)):
        L = []
        t = T0 + 4 * n
        if n > 0:
            I = f"[pod/{pod}/init-pytorch] "
            L += [I + "Server:\t\t10.96.0.10", I + "Address:\t10.96.0.10:53", I + "",
                  I + f"** server can't find titan-l8b-master-0: NXDOMAIN", I + "", I + "waiting for master, sleep 2s",
                  I + "Server:\t\t10.96.0.10", I + "Address:\t10.96.0.10:53", I + "",
                  I + "Name:\ttitan-l8b-master-0.ml-train.svc.cluster.local", I + f"Address: {PODIPS[0]}", I + ""]
        if n == BAD:
            L.append(Ind(f'Error from server (BadRequest): container "pytorch" in pod "{pod}" is waiting to start: ContainerCreating'))
            b.write(f"logs/{node}/{pod}.log", L)
            continue
        P = f"[pod/{pod}/pytorch] "
        pid = 1
        L += [P + "+ export NCCL_DEBUG=WARN", P + "+ NCCL_DEBUG=WARN",
              P + "+ exec torchrun --nnodes=4 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=titan-l8b-master-0:29400 --rdzv-id=titan-l8b --max-restarts=0 -m torchtitan.train --job.config_file ./train_configs/llama3_8b.toml --checkpoint.enable_checkpoint"]
        L.append(P + g("W", t, pid, "torch/distributed/run.py:793", "master_addr is only used for static rdzv_backend and when rdzv_endpoint is not specified."))
        for m in ["", "*****************************************",
                  "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
                  "*****************************************"]:
            L.append(P + g("W", t, pid, "torch/distributed/run.py:793", m))
        L.append(P + g("I", t + 0.01, pid, "torch/distributed/launcher/api.py:194", "Starting elastic_operator with launch configs:"))
        for k, v in [("entrypoint", "python"), ("min_nodes", "4"), ("max_nodes", "4"), ("nproc_per_node", "8"),
                     ("run_id", "titan-l8b"), ("rdzv_backend", "c10d"), ("rdzv_endpoint", "titan-l8b-master-0:29400"),
                     ("rdzv_configs", "{'timeout': 900}"), ("max_restarts", "0"), ("monitor_interval", "0.1"),
                     ("log_dir", "/tmp/torchelastic_wq4l3b0s"), ("metrics_cfg", "{}")]:
            L.append(P + f"  {k:<17}: {v}")
        L.append(P + "")
        L.append(P + g("I", t + 0.02, pid, "torch/distributed/elastic/agent/server/local_elastic_agent.py:247", "log directory set to: /tmp/torchelastic_wq4l3b0s/titan-l8b_5k1xg2da"))
        if n == 0:
            L.append(P + g("W", t + 0.02, pid, "socket.cpp:752", "[c10d] The hostname of the client socket cannot be retrieved. err=-3"))
        L.append(P + g("I", t + 0.02, pid, "torch/distributed/elastic/agent/server/api.py:838", "[default] starting workers for entrypoint: python"))
        L.append(P + g("I", t + 0.02, pid, "torch/distributed/elastic/agent/server/api.py:677", "[default] Rendezvous'ing worker group"))
        L.append(P + g("I", t + 0.05, pid, "torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1140",
                       f"The node '{pod}_{pid}_0' attempts to join the next round of the rendezvous 'titan-l8b'."))
        te = T0 + 900.4 + 0.2 * n
        L.append(P + g("I", te, pid, "torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1180",
                       f"The node '{pod}_{pid}_0' has closed the rendezvous 'titan-l8b'."))
        L += [P + "Traceback (most recent call last):", P + '  File "/usr/local/bin/torchrun", line 8, in <module>', P + "    sys.exit(main())",
              P + f'  File "{PY}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper', P + "    return f(*args, **kwargs)",
              P + f'  File "{PY}/torch/distributed/run.py", line 919, in main', P + "    run(args)",
              P + f'  File "{PY}/torch/distributed/run.py", line 910, in run', P + "    elastic_launch(",
              P + f'  File "{PY}/torch/distributed/launcher/api.py", line 138, in __call__', P + "    return launch_agent(self._config, self._entrypoint, list(args))",
              P + f'  File "{PY}/torch/distributed/launcher/api.py", line 260, in launch_agent', P + "    result = agent.run()",
              P + f'  File "{PY}/torch/distributed/elastic/metrics/api.py", line 137, in wrapper', P + "    result = f(*args, **kwargs)",
              P + f'  File "{PY}/torch/distributed/elastic/agent/server/api.py", line 711, in run', P + "    result = self._invoke_run(role)",
              P + f'  File "{PY}/torch/distributed/elastic/agent/server/api.py", line 864, in _invoke_run', P + "    self._initialize_workers(self._worker_group)",
              P + f'  File "{PY}/torch/distributed/elastic/metrics/api.py", line 137, in wrapper', P + "    result = f(*args, **kwargs)",
              P + f'  File "{PY}/torch/distributed/elastic/agent/server/api.py", line 683, in _initialize_workers', P + "    self._rendezvous(worker_group)",
              P + f'  File "{PY}/torch/distributed/elastic/metrics/api.py", line 137, in wrapper', P + "    result = f(*args, **kwargs)",
              P + f'  File "{PY}/torch/distributed/elastic/agent/server/api.py", line 500, in _rendezvous', P + "    rdzv_info = spec.rdzv_handler.next_rendezvous()",
              P + f'  File "{PY}/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 1162, in next_rendezvous', P + "    self._op_executor.run(join_op, deadline, self._get_deadline)",
              P + f'  File "{PY}/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 676, in run',
              P + "    raise RendezvousTimeoutError"]
        last = P + "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError"
        L.append(Ind(last) if n == 0 else last)
        b.write(f"logs/{node}/{pod}.log", L)
    # probes
    ev = f"""Name:             {PODS[BAD]}
Namespace:        ml-train
Priority:         1000
Service Account:  default
Node:             {NODES[BAD]}/{NODEIPS[BAD]}
Start Time:       Fri, 27 Nov 2026 {hms(T0 - 20)} +0000
Labels:           training.kubeflow.org/job-name=titan-l8b
                  training.kubeflow.org/replica-index=2
                  training.kubeflow.org/replica-type=worker
Status:           Pending
IP:               {PODIPS[BAD]}
Init Containers:
  init-pytorch:
    Image:         alpine:3.10
    State:          Terminated
      Reason:       Completed
      Exit Code:    0
    Ready:          True
Containers:
  pytorch:
    Image:          registry.local/ml/torchtitan:2026.11.3
    Port:           23456/TCP
    State:          Waiting
      Reason:       ContainerCreating
    Ready:          False
    Restart Count:  0
    Limits:
      nvidia.com/gpu:         8
      rdma/rdma_shared_device_a: 1
Conditions:
  Type                        Status
  PodReadyToStartContainers   True
  Initialized                 True
  Ready                       False
  ContainersReady             False
  PodScheduled                True
Events:
  Type    Reason     Age   From               Message
  ----    ------     ----  ----               -------
  Normal  Scheduled  16m   default-scheduler  Successfully assigned ml-train/{PODS[BAD]} to {NODES[BAD]}
  Normal  Pulled     16m   kubelet            Container image "alpine:3.10" already present on machine
  Normal  Created    16m   kubelet            Created container init-pytorch
  Normal  Started    16m   kubelet            Started container init-pytorch
  Normal  Pulled     16m   kubelet            Container image "registry.local/ml/torchtitan:2026.11.3" already present on machine""".split("\n")
    ev = [Ind(l) if l.strip() == "Reason:       ContainerCreating" else l for l in ev]
    b.write(f"probes/{NODES[BAD]}/kubectl-describe-pod.txt", ev)
    st = ["Error", "Error", "Error", "ContainerCreating"]
    b.write(f"probes/{NODES[0]}/kubectl-get-pods.txt",
            ["NAME                 READY   STATUS              RESTARTS   AGE   IP             NODE      NOMINATED NODE   READINESS GATES"] +
            [f"{PODS[i]:<20} 0/1     {st[i]:<19} 0          16m   {PODIPS[i]:<14} {NODES[i]:<9} <none>           <none>" for i in range(4)])
    b.job(f"""
job_id: "titan-l8b"
name: llama3-8b-titan-pretrain
framework: torchtitan
scheduler: kubernetes (Kubeflow PyTorchJob, elasticPolicy rdzv c10d)
status: failed
started_at: 2026-11-27T{hms(T0 - 20)}Z
ended_at: 2026-11-27T{hms(T0 + 902)}Z
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {NODES[i]}, ip: {NODEIPS[i]}, pod: {PODS[i]}, ranks: [{', '.join(str(8 * i + k) for k in range(8))}]}}\n" for i in range(4)) + """code:
  - {commit: 3f7d20e, at: 2026-11-19T10:30:00Z, message: "titan: float8 rowwise for FFN"}
  - {commit: a61c9b5, at: 2026-11-25T18:05:00Z, message: "config: seq_len 8192"}
checkpoints:
  - {step: 2500, at: 2026-11-26T21:10:00Z, path: /ckpt/titan-l8b/checkpoint/step-2500, valid: true}
  - {step: 3000, at: 2026-11-27T13:58:00Z, path: /ckpt/titan-l8b/checkpoint/step-3000, valid: true}
spares: 2
history: [titan-l8b-r3]
""")
    b.truth(fault="rendezvous_timeout", category="infrastructure",
            root_cause="the pytorch container of titan-l8b-worker-2 on gpu-b14 never started (pod stuck in ContainerCreating after its init container), so its torchrun agent never joined the c10d rendezvous and the three other agents gave up after the 900 s rendezvous timeout with RendezvousTimeoutError",
            faulty_nodes=[NODES[BAD]], stage="init", iteration=None,
            actions=[{"kind": "evict", "nodes": [NODES[BAD]]}, {"kind": "restart", "from_step": 3000}])
    return b
