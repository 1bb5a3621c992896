"""c10d TCPStore on the master pod unreachable after its host rebooted; HF accelerate in a Kubeflow PyTorchJob, kubectl logs --prefix."""
import random
from common import Bundle, Ind, hhmmss

IID = "k8s-pytorchjob-accelerate-master-reboot-store"
PODS = [("llm-sft-master-0", "gpu-node-07", "10.2.0.7"), ("llm-sft-worker-0", "gpu-node-11", "10.2.0.11"),
        ("llm-sft-worker-1", "gpu-node-12", "10.2.0.12"), ("llm-sft-worker-2", "gpu-node-15", "10.2.0.15")]
BAD = "gpu-node-07"
SVC = "llm-sft-master-0.llm-sft.ml-train.svc"
T0 = 11 * 3600 + 40 * 60 + 2
LAST = 1630
STEP_S = 2.84
ESC = "\x1b"

def build(root):
    b = Bundle(root, IID)
    rnd = random.Random(7)
    t_boot = T0 + 120 + (LAST - 1500) * STEP_S + 1500 * 0 + 1.2
    t_boot = T0 + 300 + LAST * STEP_S + 1.2
    for n, (pod, host, ip) in enumerate(PODS):
        pre = f"[pod/{pod}/pytorch] "
        L = [pre + "The following values were not passed to `accelerate launch` and had defaults used instead:",
             pre + "\t`--dynamo_backend` was set to a value of `'no'`",
             pre + "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`."]
        for g in range(4):
            L.append(pre + f"{host}:{81+g}:{81+g} [{g}] NCCL INFO Bootstrap : Using eth0:{ip}<0>")
            L.append(pre + f"{host}:{81+g}:{81+g} [{g}] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE [3]mlx5_3:1/RoCE [RO]; OOB eth0:{ip}<0>")
            L.append(pre + "/opt/conda/lib/python3.11/site-packages/transformers/training_args.py:1575: FutureWarning: `evaluation_strategy` is deprecated and will be removed in version 4.46 of 🤗 Transformers. Use `eval_strategy` instead")
        L.append(pre + "/opt/conda/lib/python3.11/site-packages/torch/distributed/fsdp/_state_dict_utils.py:773: UserWarning: When using ``NO_SHARD`` for ``ShardingStrategy``, full_state_dict will be returned.")
        if n == 0:
            L.append(pre + "Loading checkpoint shards: 100%|██████████| 4/4 [00:07<00:00,  1.79s/it]")
            L.append(pre + "***** Running training *****")
            L.append(pre + "  Num examples = 1,305,112")
            L.append(pre + "  Continuing training from checkpoint, will skip to saved global_step")
            L.append(pre + "  Continuing training from global step 1500")
            for s in range(1510, LAST + 1, 10):
                L.append(pre + str({'loss': round(1.18 - 0.0001 * (s - 1500) + rnd.uniform(-0.02, 0.02), 4), 'grad_norm': round(0.44 + rnd.uniform(-0.06, 0.06), 3), 'learning_rate': 1.71e-05, 'epoch': round(s / 5000 * 2, 2)}))
            bar = pre + "".join(f"\r {s/5000:4.0%}|{'█'*int(s/5000*40):<40}| {s}/5000 [{hhmmss(int((s-1500)*STEP_S))[1:]}<{hhmmss(int((5000-s)*STEP_S))[1:]},  2.84s/it]" for s in range(1621, LAST + 2))
            L.append(bar[: len(bar) - 23])  # cut off when the host went down
            b.write(f"logs/{host}/{pod}.log", L, trailing_newline=False)
            continue
        td = t_boot + 19.4
        r0 = 4 * n
        L += [pre + f"{host}:81:312 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.2.0.7<58121> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:{ip} remoteGid ::ffff:10.2.0.7 hca mlx5_0",
              pre + f"{host}:81:312 [0] NCCL INFO transport/net.cc:1302 -> 6",
              pre + f"[rank{r0}]:[E1121 {hhmmss(td+600)}.208311842 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank {r0}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5",
              pre + f"[rank{r0}]:[W1121 {hhmmss(td+601)}.004105210 ProcessGroupNCCL.cpp:1250] [PG ID 0 PG GUID 0(default_pg) Rank {r0}] Failed to check the \"should dump\" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer",
              pre + f"E1121 {hhmmss(td+603)}.512000 140211904 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 0 (pid: 81) of binary: /opt/conda/bin/python3.11",
              pre + f"I1121 {hhmmss(td+604)}.101000 140211904 torch/distributed/elastic/agent/server/api.py:909] [default] Worker group FAILED. 3/3 attempts left; will restart worker group",
              pre + f"I1121 {hhmmss(td+604)}.102000 140211904 torch/distributed/elastic/agent/server/api.py:887] [default] Stopping worker group",
              pre + f"I1121 {hhmmss(td+604)}.880000 140211904 torch/distributed/elastic/agent/server/api.py:861] [default] Rendezvous'ing worker group"]
        for k in range(3):
            L.append(pre + f"[W1121 {hhmmss(td+606+k*20)}.{rnd.randint(100000000,999999999)} socket.cpp:752] [c10d] The client socket has failed to connect to [{SVC}]:23456 (errno: 113 - No route to host).")
        last = pre + f"torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details."
        L += [pre + "Traceback (most recent call last):",
              pre + '  File "/opt/conda/lib/python3.11/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 159, in _create_tcp_store',
              pre + "    store = TCPStore(",
              pre + "            ^^^^^^^^^",
              pre + f"torch.distributed.DistNetworkError: The client socket has timed out after 60000ms while trying to connect to ({SVC}, 23456).",
              pre + "",
              pre + "The above exception was the direct cause of the following exception:",
              pre + "",
              pre + "Traceback (most recent call last):",
              pre + '  File "/opt/conda/bin/accelerate", line 8, in <module>',
              pre + "    sys.exit(main())",
              pre + '  File "/opt/conda/lib/python3.11/site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 1125, in next_rendezvous',
              pre + "    self._op_executor.run(join_op, deadline, self._get_deadline)",
              pre + '  File "/opt/conda/lib/python3.11/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 114, in get_state',
              pre + "    base64_state: bytes = self._call_store(\"get\", self._key)",
              Ind(last) if n == 1 else last]
        b.write(f"logs/{host}/{pod}.log", L)
    ev = ["LAST SEEN   TYPE      REASON                   OBJECT                        MESSAGE",
          f"41m         Normal    Started                  pod/llm-sft-master-0          Started container pytorch",
          f"19m         Warning   NodeNotReady             pod/llm-sft-master-0          Node is not ready",
          Ind(f"17m         Warning   Rebooted                 node/{BAD}                    Node {BAD} has been rebooted, boot id: 5b1e0c6f-2d7a-4c1b-9f3e-81a4d02c77b9"),
          f"17m         Normal    NodeReady                node/{BAD}                    Node {BAD} status is now: NodeReady",
          f"16m         Warning   FailedMount              pod/llm-sft-master-0          MountVolume.SetUp failed for volume \"dshm\" : object \"ml-train\"/\"dshm\" not registered",
          f"9m          Normal    ExitedWithCode           pytorchjob/llm-sft            Pod: ml-train.llm-sft-worker-0 exited with code 1",
          f"9m          Normal    PyTorchJobFailed         pytorchjob/llm-sft            PyTorchJob ml-train/llm-sft has failed because 1 Worker replica(s) failed."]
    b.write(f"probes/{BAD}/k8s-events.txt", ev)
    b.write(f"probes/{BAD}/uptime.json", ['{"probe": "uptime", "status": "warn", "detail": "up 17 min; previous boot ended without a clean shutdown (last -x: crash)", "metrics": {"uptime_s": 1031, "boots_24h": 2}}'])
    for pod, host, ip in PODS[1:]:
        b.write(f"probes/{host}/uptime.json", ['{"probe": "uptime", "status": "ok", "detail": "up 23 days", "metrics": {"uptime_s": 1987310, "boots_24h": 0}}'])
    nodes = "\n".join(f"  - {{host: {h}, ip: {ip}, pod: {p}, ranks: [{', '.join(str(r) for r in range(4*i, 4*i+4))}]}}" for i, (p, h, ip) in enumerate(PODS))
    b.job(f"""
job_id: "llm-sft"
name: mistral-7b-sft-accelerate
framework: fsdp
launcher: accelerate
scheduler: kubernetes
namespace: ml-train
status: failed
started_at: 2026-11-21T{hhmmss(T0)}Z
ended_at: 2026-11-21T{hhmmss(t_boot+19.4+700)}Z
exit_code: 1
gpus_per_node: 4
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
master: {{host: {BAD}, addr: {SVC}, port: 23456}}
nodes:
{nodes}
code:
  - {{commit: 61ad0f3, at: 2026-11-18T15:10:00Z, message: "sft: packing on, max_seq_len 4096"}}
checkpoints:
  - {{step: 1000, at: 2026-11-21T07:12:00Z, path: s3://ml-ckpt/llm-sft/checkpoint-1000, valid: true}}
  - {{step: 1500, at: 2026-11-21T11:31:00Z, path: s3://ml-ckpt/llm-sft/checkpoint-1500, valid: true}}
spares: 0
""")
    b.truth(fault="c10d_store_unreachable", category="infrastructure",
            root_cause=f"{BAD}, the host of the master pod that serves the c10d TCPStore / rendezvous endpoint, rebooted mid-training; the workers lost their NCCL peer, and when their elastic agents tried to re-rendezvous the store at {SVC}:23456 was unreachable, so the job failed",
            faulty_nodes=[BAD], stage="training", iteration=LAST + 1,
            actions=[{"kind": "restart", "from_step": 1500}])
    return b
