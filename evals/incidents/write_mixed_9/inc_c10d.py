"""Lightning on a Kubeflow PyTorchJob, torchrun --redirects 3 --log-dir: the master pod (host of the c10d
store) is drained off its node mid-training; the other agents lose the store."""
import datetime as dt
import random

from common import Bundle, job_yaml, ts

ID = "pytorchjob-lightning-c10d-master-drained"
HOSTS = [("gke-train-h100-pool-1-7c2f", "10.64.0.21", "lit-gpt-ft-master-0"),
         ("gke-train-h100-pool-1-8d41", "10.64.0.22", "lit-gpt-ft-worker-0"),
         ("gke-train-h100-pool-1-9a03", "10.64.0.23", "lit-gpt-ft-worker-1"),
         ("gke-train-h100-pool-1-b6e2", "10.64.0.24", "lit-gpt-ft-worker-2")]
RUNDIRS = ["lit-gpt-ft_2xk1f0qe", "lit-gpt-ft_7m3c9a1d", "lit-gpt-ft_q0p4zz8w", "lit-gpt-ft_c5e2n1tb"]
SP = "/usr/local/lib/python3.10/dist-packages"


def g(sev, t, pid, where):
    return f"{sev}{t.strftime('%m%d %H:%M:%S')}.{t.microsecond:06d} {pid} {where}] "


def agent(node, t0, tf):
    host, ip, pod = HOSTS[node]
    pid = 31
    L = [g("W", t0, pid, "torch/distributed/run.py:757") + "",
         g("W", t0, pid, "torch/distributed/run.py:757") + "*****************************************",
         g("W", t0, pid, "torch/distributed/run.py:757") + "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
         g("W", t0, pid, "torch/distributed/run.py:757") + "*****************************************"]
    t1 = ts(t0, 0.3)
    if node == 0:
        L.append(g("I", t1, pid, "torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py:208") + "Process 31 hosts the TCP store for the C10d rendezvous backend.")
    L.append(g("I", t1, pid, "torch/distributed/elastic/agent/server/local_elastic_agent.py:285") + f"log directory set to: /var/log/torchrun/{RUNDIRS[node]}")
    L.append(g("I", t1, pid, "torch/distributed/elastic/agent/server/api.py:836") + "[default] starting workers for entrypoint: python")
    L.append(g("I", t1, pid, "torch/distributed/elastic/agent/server/api.py:649") + "[default] Rendezvous'ing worker group")
    L.append(g("I", ts(t1, 0.1), pid, "torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1120") + f"The node '{pod}_31_0' attempts to join the next round of the rendezvous 'lit-gpt-ft'.")
    t2 = ts(t1, 9.0)
    L.append(g("I", t2, pid, "torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1165") + f"The node '{pod}_31_0' has joined round 0 of the rendezvous 'lit-gpt-ft' as rank {node} in a world of size 4.")
    L.append(g("I", t2, pid, "torch/distributed/elastic/agent/server/api.py:512") + "[default] Rendezvous complete for workers. Result:")
    L += ["  restart_count=0", "  master_addr=lit-gpt-ft-master-0", "  master_port=44821",
          f"  group_rank={node}", "  group_world_size=4", "  local_ranks=[0, 1, 2, 3, 4, 5, 6, 7]",
          f"  role_ranks=[{', '.join(str(node * 8 + i) for i in range(8))}]",
          f"  global_ranks=[{', '.join(str(node * 8 + i) for i in range(8))}]",
          "  role_world_sizes=[32, 32, 32, 32, 32, 32, 32, 32]",
          "  global_world_sizes=[32, 32, 32, 32, 32, 32, 32, 32]", ""]
    L.append(g("I", t2, pid, "torch/distributed/elastic/agent/server/api.py:657") + "[default] Starting worker group")
    L.append(g("I", t2, pid, "torch/distributed/elastic/agent/server/local_elastic_agent.py:236") + "Environment variable 'TORCHELASTIC_ENABLE_FILE_TIMER' not found. Do not start FileTimerServer.")
    L.append(g("I", t2, pid, "torch/distributed/elastic/agent/server/local_elastic_agent.py:268") + "Environment variable 'TORCHELASTIC_HEALTH_CHECK_PORT' not found. Do not start health check.")
    for lr in range(8):
        L.append(g("I", t2, pid, "torch/distributed/elastic/multiprocessing/api.py:466") + f"Setting worker{lr} reply file to: /var/log/torchrun/{RUNDIRS[node]}/attempt_0/{lr}/error.json")
    if node == 0:
        L.append(g("W", tf, pid, "torch/distributed/elastic/agent/server/api.py:741") + "Received Signals.SIGTERM death signal, shutting down workers")
        for lr in range(8):
            L.append(g("W", ts(tf, 0.01), pid, "torch/distributed/elastic/multiprocessing/api.py:851") + f"Sending process {58 + lr} closing signal SIGTERM")
        L += ["Traceback (most recent call last):",
              '  File "/usr/local/bin/torchrun", line 8, in <module>',
              "    sys.exit(main())",
              f'  File "{SP}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 347, in wrapper',
              "    return f(*args, **kwargs)",
              f'  File "{SP}/torch/distributed/run.py", line 879, in main',
              "    run(args)",
              f'  File "{SP}/torch/distributed/run.py", line 870, in run',
              "    elastic_launch(",
              f'  File "{SP}/torch/distributed/launcher/api.py", line 132, in __call__',
              "    return launch_agent(self._config, self._entrypoint, list(args))",
              f'  File "{SP}/torch/distributed/launcher/api.py", line 254, in launch_agent',
              "    result = agent.run()",
              f'  File "{SP}/torch/distributed/elastic/agent/server/api.py", line 727, in run',
              "    result = self._invoke_run(role)",
              f'  File "{SP}/torch/distributed/elastic/agent/server/api.py", line 868, in _invoke_run',
              "    time.sleep(monitor_interval)",
              f'  File "{SP}/torch/distributed/elastic/multiprocessing/api.py", line 79, in _terminate_process_handler',
              "    raise SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)",
              "torch.distributed.elastic.multiprocessing.api.SignalException: Process 31 got signal: 15"]
    else:
        L += ["Traceback (most recent call last):",
              f'  File "{SP}/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 113, in _call_store',
              "    return getattr(self._store, store_op)(*args, **kwargs)",
              "torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?",
              "", "The above exception was the direct cause of the following exception:", "",
              "Traceback (most recent call last):",
              '  File "/usr/local/bin/torchrun", line 8, in <module>',
              "    sys.exit(main())",
              f'  File "{SP}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 347, in wrapper',
              "    return f(*args, **kwargs)",
              f'  File "{SP}/torch/distributed/run.py", line 879, in main',
              "    run(args)",
              f'  File "{SP}/torch/distributed/run.py", line 870, in run',
              "    elastic_launch(",
              f'  File "{SP}/torch/distributed/launcher/api.py", line 132, in __call__',
              "    return launch_agent(self._config, self._entrypoint, list(args))",
              f'  File "{SP}/torch/distributed/launcher/api.py", line 254, in launch_agent',
              "    result = agent.run()",
              f'  File "{SP}/torch/distributed/elastic/agent/server/api.py", line 727, in run',
              "    result = self._invoke_run(role)",
              f'  File "{SP}/torch/distributed/elastic/agent/server/api.py", line 900, in _invoke_run',
              "    num_nodes_waiting = rdzv_handler.num_nodes_waiting()",
              f'  File "{SP}/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 1198, in num_nodes_waiting',
              "    self._state_holder.sync()",
              f'  File "{SP}/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 437, in sync',
              "    get_response = self._backend.get_state()",
              f'  File "{SP}/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 75, in get_state',
              "    base64_state: bytes = self._call_store(\"get\", self._key)",
              f'  File "{SP}/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 115, in _call_store',
              "    raise RendezvousConnectionError(",
              "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details."]
    return L


def rank_files(b, node, t0, tf, r):
    host, ip, pod = HOSTS[node]
    for lr in range(8):
        rank = node * 8 + lr
        d = f"logs/{host}/{RUNDIRS[node]}/attempt_0/{lr}"
        out = [f"Initializing distributed: GLOBAL_RANK: {rank}, MEMBER: {rank + 1}/32"]
        if rank == 0:
            out += ["----------------------------------------------------------------------------------------------------",
                    "distributed_backend=nccl", "All distributed processes registered. Starting with 32 processes",
                    "----------------------------------------------------------------------------------------------------", ""]
        out.append(f"LOCAL_RANK: {lr} - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]")
        if rank == 0:
            out += ["Restoring states from the checkpoint path at /mnt/ckpt/lit-gpt-ft/step=7000.ckpt",
                    "", "  | Name  | Type | Params | Mode ", "-----------------------------------------",
                    "0 | model | GPT  | 6.7 B  | train", "-----------------------------------------",
                    "6.7 B     Trainable params", "0         Non-trainable params", "6.7 B     Total params",
                    "26,833.674Total estimated model params size (MB)",
                    "Restored all states from the checkpoint at /mnt/ckpt/lit-gpt-ft/step=7000.ckpt"]
            for s in (7500, 8000):
                out.append(f"Epoch 0, global step {s}: 'val_loss' reached {2.412 - (s - 7500) / 50000:.5f} (best {2.412 - (s - 7500) / 50000:.5f}), saving model to '/mnt/ckpt/lit-gpt-ft/step={s}.ckpt' as top 3")
        b.add(d + "/stdout.log", out)
        err = [f"{SP}/lightning/fabric/connector.py:571: `precision=bf16` is supported for historical reasons but its usage is discouraged. Please set your precision to bf16-mixed instead!",
               f"{SP}/torch/distributed/fsdp/_init_utils.py:440: UserWarning: FSDP is switching to use `NO_SHARD` instead of ShardingStrategy.SHARD_GRAD_OP since the world size is 1." if False else
               f"{SP}/lightning/pytorch/trainer/connectors/data_connector.py:424: The 'train_dataloader' does not have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument` to `num_workers=15` in the `DataLoader` to improve performance."]
        if rank == 0:
            bar = []
            for s in range(8300, 8401, 20):
                el = (s - 7000) * 5.21
                bar.append(f"Epoch 0:  {s * 100 // 20000}%|{'█' * (s * 10 // 20000)}{'▏'}{' ' * (9 - s * 10 // 20000)}| {s}/20000 [{int(el // 3600)}:{int(el % 3600 // 60):02d}:{int(el % 60):02d}<{int((20000 - s) * 5.21 // 3600)}:{int((20000 - s) * 5.21 % 3600 // 60):02d}:00,  0.19it/s, v_num=3, train_loss={2.31 - (s - 8300) / 9000:.3f}]")
            err.append("\r".join(bar))
        if node == 0:
            err.append(f"[rank: {rank}] Received SIGTERM: 15")
        else:
            t = ts(tf, 1.2 + lr * 0.01)
            err.append(f"[rank{rank}]:[W{t.strftime('%m%d %H:%M:%S')}.{t.microsecond:06d}114 ProcessGroupNCCL.cpp:1250] [PG 0 Rank {rank}] Failed to check the \"should dump\" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer")
            err.append(f"{host}:{200 + lr}:{912 + lr} [{lr}] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer 10.64.0.21<{45312 + lr}>")
            err += [f"[rank{rank}]: Traceback (most recent call last):",
                    f'[rank{rank}]:   File "/workspace/finetune.py", line 188, in <module>',
                    f"[rank{rank}]:     trainer.fit(model, datamodule=dm, ckpt_path=args.resume)",
                    f'[rank{rank}]:   File "{SP}/lightning/pytorch/strategies/fsdp.py", line 425, in reduce',
                    f"[rank{rank}]:     return _sync_ddp_if_available(tensor, group, reduce_op=reduce_op)",
                    f"[rank{rank}]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2006, remote process exited or there was a network error, NCCL version 2.20.5",
                    f"[rank{rank}]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
                    f"[rank{rank}]: Last error:",
                    f"[rank{rank}]: socketProgress: Connection closed by remote peer 10.64.0.21<{45312 + lr}>"]
        b.add(d + "/stderr.log", err)


def build(root):
    b = Bundle(root, ID)
    r = random.Random(3)
    t0 = dt.datetime(2026, 11, 21, 0, 9, 41, 118000)
    tf = dt.datetime(2026, 11, 21, 2, 11, 37, 551000)
    for node in range(4):
        host, ip, pod = HOSTS[node]
        b.add(f"logs/{host}/{pod}.console.log", agent(node, t0, ts(tf, 0.0 if node == 0 else 6.4)))
        rank_files(b, node, t0, tf, r)
    H = HOSTS[0][0]
    b.add(f"probes/{H}/k8s-events.txt", [
        "LAST SEEN   TYPE      REASON               OBJECT                                   MESSAGE",
        "123m        Normal    Scheduled            pod/lit-gpt-ft-master-0                  Successfully assigned training/lit-gpt-ft-master-0 to gke-train-h100-pool-1-7c2f",
        "123m        Normal    Pulled               pod/lit-gpt-ft-master-0                  Container image \"us-docker.pkg.dev/ml-infra/train/lit-gpt:2026.11.2\" already present on machine",
        "123m        Normal    Created              pod/lit-gpt-ft-master-0                  Created container pytorch",
        "123m        Normal    Started              pod/lit-gpt-ft-master-0                  Started container pytorch",
        "2m31s       Normal    NodeNotSchedulable   node/gke-train-h100-pool-1-7c2f          Node gke-train-h100-pool-1-7c2f status is now: NodeNotSchedulable",
        "2m29s       Normal    Killing              pod/lit-gpt-ft-master-0                  Stopping container pytorch",
        "2m20s       Normal    Scheduled            pod/lit-gpt-ft-master-0                  Successfully assigned training/lit-gpt-ft-master-0 to gke-train-h100-pool-1-d913",
        "2m19s       Normal    Pulling              pod/lit-gpt-ft-master-0                  Pulling image \"us-docker.pkg.dev/ml-infra/train/lit-gpt:2026.11.2\"",
        "98s         Warning   BackOff              pod/lit-gpt-ft-worker-1                  Back-off restarting failed container pytorch in pod lit-gpt-ft-worker-1_training(5b2e1c0d-9a4f-4d61-8f0e-2f71c3a9b604)",
        "61s         Normal    ExitedWithCode       pytorchjob/lit-gpt-ft                    Pod: training.lit-gpt-ft-worker-0 exited with code 1",
        "61s         Warning   PyTorchJobFailed     pytorchjob/lit-gpt-ft                    PyTorchJob lit-gpt-ft is failed because 1 Worker replica(s) failed."])
    tk = tf.strftime('%m%d %H:%M:%S')
    b.add(f"probes/{H}/kubelet.txt", [
        f"Nov 21 02:11:35 {H} kubelet[2311]: I{tk}.102871    2311 kubelet_node_status.go:669] \"Recording event message for node\" node=\"{H}\" event=\"NodeNotSchedulable\"",
        f"Nov 21 02:11:37 {H} kubelet[2311]: I{tk}.412233    2311 kubelet.go:2407] \"SyncLoop DELETE\" source=\"api\" pods=[\"training/lit-gpt-ft-master-0\"]",
        f"Nov 21 02:11:37 {H} kubelet[2311]: I{tk}.413904    2311 kuberuntime_container.go:779] \"Killing container with a grace period\" pod=\"training/lit-gpt-ft-master-0\" podUID=\"0c6f2a51-7d3e-4b8a-9e21-6a1c4f08d2b7\" containerName=\"pytorch\" containerID=\"containerd://4a9e0f7b2c61d3e8f05a1b7c9d2e4f6a8b0c1d3e5f7a9b2c4d6e8f0a1b3c5d7e\" gracePeriod=30",
        f"Nov 21 02:11:44 {H} kubelet[2311]: I1121 02:11:44.009114    2311 kubelet.go:2413] \"SyncLoop REMOVE\" source=\"api\" pods=[\"training/lit-gpt-ft-master-0\"]",
        f"Nov 21 02:11:52 {H} node-upgrade-drain[7810]: drained node {H} for surge upgrade 1.30.5-gke.1014001 -> 1.30.6-gke.1125000"])
    b.mark(f"logs/{H}/lit-gpt-ft-master-0.console.log", "Received Signals.SIGTERM death signal")
    b.mark(f"probes/{H}/k8s-events.txt", "NodeNotSchedulable   node/")
    b.mark(f"probes/{H}/k8s-events.txt", "Stopping container pytorch")
    b.mark(f"probes/{H}/kubelet.txt", "Killing container with a grace period")
    b.mark(f"logs/{HOSTS[1][0]}/lit-gpt-ft-worker-0.console.log", "RendezvousConnectionError: The connection to the C10d store has failed")
    nodes = [(h, ip, list(range(i * 8, i * 8 + 8))) for i, (h, ip, _) in enumerate(HOSTS)]
    y = job_yaml("lit-gpt-ft", "gpt-6.7b-instruct-ft", "fsdp", "failed", t0, ts(tf, 40), 1, 8,
                 (1, 1, 32, 1), nodes,
                 [("d0e3b71", dt.datetime(2026, 11, 7, 15, 12), "ft: lightning 2.4, fsdp full shard"),
                  ("e85a4c0", dt.datetime(2026, 11, 15, 9, 40), "ft: new instruct mix v7")],
                 [(7000, dt.datetime(2026, 11, 20, 22, 58), "/mnt/ckpt/lit-gpt-ft/step=7000.ckpt", True),
                  (7500, dt.datetime(2026, 11, 21, 0, 53), "/mnt/ckpt/lit-gpt-ft/step=7500.ckpt", True),
                  (8000, dt.datetime(2026, 11, 21, 1, 36), "/mnt/ckpt/lit-gpt-ft/step=8000.ckpt", True)],
                 extra={"scheduler": "kubeflow-pytorchjob", "launcher": "torchrun --rdzv_backend c10d --rdzv_endpoint lit-gpt-ft-master-0:23456 --redirects 3 --log-dir /var/log/torchrun",
                        "framework_detail": "lightning 2.4 (FSDPStrategy)"})
    truth = {"fault": "c10d_store_unreachable", "category": "infrastructure",
             "root_cause": "a GKE surge upgrade cordoned and drained gke-train-h100-pool-1-7c2f mid-training, killing lit-gpt-ft-master-0 whose torchrun agent hosted the c10d rendezvous TCPStore; the worker agents lost the store (RendezvousConnectionError, Failed to recv) and their ranks lost ranks 0-7, so the PyTorchJob failed at step 8401",
             "faulty_nodes": ["gke-train-h100-pool-1-7c2f"], "stage": "training", "iteration": 8401,
             "actions": [{"kind": "restart", "from_step": 8000}]}
    return b.write(y, truth)
