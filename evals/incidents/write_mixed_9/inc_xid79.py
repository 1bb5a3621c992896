"""DeepSpeed (pdsh launcher, --enable_each_rank_log): a GPU falls off the bus (Xid 79) while ZeRO shards are saved."""
import datetime as dt
import random

from common import Bundle, job_yaml, ts, nvidia_smi_q, dmesg_boot

ID = "deepspeed-ckpt-save-xid79"
HOSTS = [("gpu-b01", "10.3.0.11"), ("gpu-b02", "10.3.0.12"), ("gpu-b03", "10.3.0.13"), ("gpu-b04", "10.3.0.14")]
BAD, BADLR = 2, 5
CK = "/lustre/ckpt/ds-30b"
BUS = ["00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0",
       "00000000:9A:00.0", "00000000:9D:00.0", "00000000:BA:00.0", "00000000:DB:00.0"]
SP = "/usr/local/lib/python3.10/dist-packages"


def d(t):
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"


def build(root):
    b = Bundle(root, ID)
    r = random.Random(79)
    t0 = dt.datetime(2026, 11, 22, 19, 2, 11, 118000)
    tsave = dt.datetime(2026, 11, 23, 2, 41, 7, 310000)
    prefix = ts(t0, 2).strftime("%Y%m%d%H%M%S")
    # launcher console on the head node (runner + pdsh-prefixed launch.py of every node)
    W = "eyJncHUtYjAxIjogWzAsIDEsIDIsIDMsIDQsIDUsIDYsIDddLCAiZ3B1LWIwMiI6IFswLCAxLCAyLCAzLCA0LCA1LCA2LCA3XSwgImdwdS1iMDMiOiBbMCwgMSwgMiwgMywgNCwgNSwgNiwgN10sICJncHUtYjA0IjogWzAsIDEsIDIsIDMsIDQsIDUsIDYsIDddfQ=="
    A = [f"[{d(t0)}] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda (auto detect)",
         f"[{d(t0)}] [INFO] [runner.py:463:main] Using IP address of 10.3.0.11 for node gpu-b01",
         f"[{d(t0)}] [INFO] [multinode_runner.py:80:get_cmd] Running on the following workers: gpu-b01,gpu-b02,gpu-b03,gpu-b04",
         f"[{d(t0)}] [INFO] [runner.py:568:main] cmd = pdsh -S -f 1024 -w gpu-b01,gpu-b02,gpu-b03,gpu-b04 export PYTHONPATH=/workspace; cd /workspace; /usr/bin/python -u -m deepspeed.launcher.launch --world_info={W} --node_rank=%n --master_addr=10.3.0.11 --master_port=29500 --enable_each_rank_log=/lustre/logs/ds-30b/ranks train.py --deepspeed_config ds_z2_bf16.json --save_interval 1000"]
    for i, (h, ip) in enumerate(HOSTS):
        t = ts(t0, 1.5 + i * 0.05)
        A += [f"{h}: [{d(t)}] [INFO] [launch.py:146:main] WORLD INFO DICT: {{'gpu-b01': [0, 1, 2, 3, 4, 5, 6, 7], 'gpu-b02': [0, 1, 2, 3, 4, 5, 6, 7], 'gpu-b03': [0, 1, 2, 3, 4, 5, 6, 7], 'gpu-b04': [0, 1, 2, 3, 4, 5, 6, 7]}}",
              f"{h}: [{d(t)}] [INFO] [launch.py:152:main] nnodes=4, num_local_procs=8, node_rank={i}",
              f"{h}: [{d(t)}] [INFO] [launch.py:163:main] global_rank_mapping=defaultdict(<class 'list'>, {{'gpu-b01': [0, 1, 2, 3, 4, 5, 6, 7], 'gpu-b02': [8, 9, 10, 11, 12, 13, 14, 15], 'gpu-b03': [16, 17, 18, 19, 20, 21, 22, 23], 'gpu-b04': [24, 25, 26, 27, 28, 29, 30, 31]}})",
              f"{h}: [{d(t)}] [INFO] [launch.py:164:main] dist_world_size=32",
              f"{h}: [{d(t)}] [INFO] [launch.py:168:main] Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7"]
    te = ts(tsave, 3.9)
    A += [f"gpu-b03: [{d(te)}] [INFO] [launch.py:316:sigkill_handler] Killing subprocess {30110 + k}" for k in range(8)]
    A += [f"gpu-b03: [{d(ts(te, 0.2))}] [ERROR] [launch.py:322:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', '--local_rank=5', '--deepspeed_config', 'ds_z2_bf16.json', '--save_interval', '1000'] exits with return code = 1",
          "pdsh@gpu-b01: gpu-b03: ssh exited with exit code 1"]
    for i in (0, 1, 3):
        tk = ts(tsave, 31.0 + i)
        A += [f"{HOSTS[i][0]}: [{d(tk)}] [INFO] [launch.py:316:sigkill_handler] Killing subprocess {30110 + 1000 * i + k}" for k in range(8)]
        A += [f"{HOSTS[i][0]}: [{d(ts(tk, 0.2))}] [ERROR] [launch.py:322:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', '--local_rank={(i * 3) % 8}', '--deepspeed_config', 'ds_z2_bf16.json', '--save_interval', '1000'] exits with return code = 1",
              f"pdsh@gpu-b01: {HOSTS[i][0]}: ssh exited with exit code 1"]
    b.add("logs/gpu-b01/deepspeed-launcher.log", A)
    # per-rank logs
    for i, (h, ip) in enumerate(HOSTS):
        for lr in range(8):
            rank = i * 8 + lr
            L = [f"[{d(ts(t0, 6))}] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda (auto detect)",
                 f"[{d(ts(t0, 9))}] [INFO] [comm.py:637:init_distributed] cdb=None"]
            if rank == 0:
                L += [f"[{d(ts(t0, 9))}] [INFO] [comm.py:668:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl",
                      f"[{d(ts(t0, 48))}] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=0.15.4, git-hash=unknown, git-branch=unknown",
                      f"[{d(ts(t0, 49))}] [INFO] [logging.py:96:log_dist] [Rank 0] Creating BF16 optimizer",
                      f"[{d(ts(t0, 51))}] [INFO] [logging.py:96:log_dist] [Rank 0] Creating torch.bfloat16 ZeRO stage 2 optimizer",
                      f"[{d(ts(t0, 51))}] [INFO] [stage_1_and_2.py:149:__init__] Reduce bucket size 500000000",
                      f"[{d(ts(t0, 51))}] [INFO] [stage_1_and_2.py:150:__init__] Allgather bucket size 500000000",
                      f"[{d(ts(t0, 96))}] [INFO] [engine.py:3007:_get_all_zero_checkpoint_state_dicts] successfully read 32 ZeRO state_dicts for rank 0",
                      f"[{d(ts(t0, 97))}] [INFO] [engine.py:2957:_load_zero_checkpoint] loading 32 zero partition checkpoints for rank 0"]
            L.append(f"{SP}/torch/_dynamo/eval_frame.py:600: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.5 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, but if you need to preserve the current behavior, you can pass use_reentrant=True. Refer to docs for more details on the differences between the two variants.")
            L.append("  return fn(*args, **kwargs)")
            if rank == 0:
                for st in range(5910, 6001, 10):
                    tt = ts(tsave, -(6000 - st) * 2.71)
                    L.append(f"[{d(tt)}] [INFO] [logging.py:96:log_dist] [Rank 0] step={st}, skipped=0, lr=[{2.1e-4 - (st - 5900) * 1e-9:.6e}], mom=[(0.9, 0.95)]")
                    L.append(f"[{d(tt)}] [INFO] [timer.py:264:stop] epoch=0/micro_step={st * 8}/global_step={st}, RunningAvgSamplesPerSec={94.4 + r.uniform(-0.3, 0.3):.6f}, CurrSamplesPerSec={94.4 + r.uniform(-2, 2):.6f}, MemAllocated=41.82GB, MaxMemAllocated=67.03GB")
                    L.append(f"step {st} | loss {1.862 - (st - 5900) * 0.00011 + r.uniform(-0.01, 0.01):.4f} | tokens/s {776000 + r.randint(-4000, 4000)}")
                L += [f"[{d(tsave)}] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint global_step6000 is about to be saved!",
                      f"[{d(ts(tsave, 0.1))}] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model checkpoint: {CK}/global_step6000/mp_rank_00_model_states.pt",
                      f"[{d(ts(tsave, 0.1))}] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Saving {CK}/global_step6000/mp_rank_00_model_states.pt...",
                      f"[{d(ts(tsave, 2.9))}] [INFO] [torch_checkpoint_engine.py:23:save] [Torch] Saved {CK}/global_step6000/mp_rank_00_model_states.pt."]
            opt = f"{CK}/global_step6000/bf16_zero_pp_rank_{rank}_mp_rank_00_optim_states.pt"
            L.append(f"[{d(ts(tsave, 3.0))}] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Saving {opt}...")
            if (i, lr) == (BAD, BADLR):
                L += ["Traceback (most recent call last):",
                      '  File "/workspace/train.py", line 322, in <module>',
                      "    main()",
                      '  File "/workspace/train.py", line 301, in main',
                      "    engine.save_checkpoint(args.save_dir, tag=f\"global_step{step}\")",
                      f'  File "{SP}/deepspeed/runtime/engine.py", line 3140, in save_checkpoint',
                      "    self._save_zero_checkpoint(save_dir, tag)",
                      f'  File "{SP}/deepspeed/runtime/engine.py", line 3419, in _save_zero_checkpoint',
                      "    self.checkpoint_engine.save(zero_sd, zero_checkpoint_name)",
                      f'  File "{SP}/deepspeed/runtime/checkpoint_engine/torch_checkpoint_engine.py", line 22, in save',
                      "    torch.save(state_dict, path)",
                      f'  File "{SP}/torch/serialization.py", line 628, in save',
                      "    _save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)",
                      f'  File "{SP}/torch/serialization.py", line 862, in _save',
                      "    storage = storage.cpu()",
                      f'  File "{SP}/torch/storage.py", line 260, in cpu',
                      "    return torch.UntypedStorage(self.size()).copy_(self, False)",
                      "RuntimeError: CUDA error: unknown error",
                      "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                      "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                      "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", ""]
            else:
                L.append(f"[{d(ts(tsave, 3.0 + r.uniform(8, 14)))}] [INFO] [torch_checkpoint_engine.py:23:save] [Torch] Saved {opt}.")
                if i != BAD and lr in (0, 3, 6):
                    tt = ts(tsave, 30.5 + lr * 0.01)
                    L += [f"[rank{rank}]: Traceback (most recent call last):",
                          f'[rank{rank}]:   File "/workspace/train.py", line 301, in main',
                          f"[rank{rank}]:     engine.save_checkpoint(args.save_dir, tag=f\"global_step{{step}}\")",
                          f'[rank{rank}]:   File "{SP}/deepspeed/runtime/engine.py", line 3152, in save_checkpoint',
                          f"[rank{rank}]:     dist.barrier()",
                          f"[rank{rank}]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote process exited or there was a network error, NCCL version 2.21.5",
                          f"[rank{rank}]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
                          f"[rank{rank}]: Last error:",
                          f"[rank{rank}]: NET/IB : Got completion from peer 10.3.0.13<{51200 + lr}> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:{ip} remoteGids::ffff:10.3.0.13"]
            b.add(f"logs/{h}/{prefix}_rank{rank}.log", L)
        dm = dmesg_boot(ts(t0, -86400 * 9), h, seed=i + 30)
        lost = None
        if i == BAD:
            lost = BUS[BADLR]
            s = "[" + ts(tsave, 3.2).strftime("%a %b %d %H:%M:%S %Y") + "]"
            dm += [f"{s} pcieport 0000:97:01.0: AER: Uncorrected (Fatal) error received: 0000:9d:00.0",
                   f"{s} nvidia 0000:9d:00.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Inaccessible, (Unregistered Agent ID)",
                   f"{s} NVRM: Xid (PCI:0000:9d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
                   f"{s} NVRM: GPU 0000:9d:00.0: GPU has fallen off the bus.",
                   f"{s} NVRM: GPU 0000:9d:00.0: GPU serial number is 1654223015631.",
                   f"{s} NVRM: A GPU crash dump has been created. If possible, please run",
                   "NVRM: nvidia-bug-report.sh as root to collect this data before",
                   "NVRM: the NVIDIA kernel module is unloaded."]
        b.add(f"probes/{h}/dmesg.txt", dm)
        b.add(f"probes/{h}/nvidia-smi.txt", nvidia_smi_q(h, ts(tsave, 600), BUS, lost=lost, seed=i + 40))
    bad = f"logs/gpu-b03/{prefix}_rank21.log"
    b.mark(bad, "RuntimeError: CUDA error: unknown error")
    b.mark("probes/gpu-b03/dmesg.txt", "79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
    b.mark("probes/gpu-b03/nvidia-smi.txt", "GPU is lost")
    nodes = [(h, ip, list(range(i * 8, i * 8 + 8))) for i, (h, ip) in enumerate(HOSTS)]
    y = job_yaml("ds-30b-1122", "dense-30b-zero2", "deepspeed", "failed", t0, ts(tsave, 36), 1, 8,
                 (1, 1, 32, 1), nodes,
                 [("8f2e6b0", dt.datetime(2026, 11, 9, 12, 30), "ds 0.15.4, zero2 bf16"),
                  ("c09d1aa", dt.datetime(2026, 11, 17, 15, 45), "tokenizer: add code tokens")],
                 [(4000, dt.datetime(2026, 11, 22, 11, 58), f"{CK}/global_step4000", True),
                  (5000, dt.datetime(2026, 11, 22, 23, 55), f"{CK}/global_step5000", True),
                  (6000, ts(tsave, 3), f"{CK}/global_step6000", False)],
                 extra={"scheduler": "deepspeed-pdsh", "launcher": "deepspeed --hostfile hostfile --enable_each_rank_log /lustre/logs/ds-30b/ranks"})
    truth = {"fault": "gpu_fell_off_bus", "category": "hardware",
             "root_cause": "GPU 5 (PCI 0000:9d:00) on gpu-b03 fell off the bus (PCIe fatal AER, Xid 79) while rank 21 copied its ZeRO optimizer shard to host memory for the global_step6000 checkpoint; the save failed with CUDA 'unknown error', global_step6000 is incomplete, and the other ranks died at the post-save barrier",
             "faulty_nodes": ["gpu-b03"], "stage": "checkpoint", "iteration": 6001,
             "actions": [{"kind": "evict", "nodes": ["gpu-b03"]}, {"kind": "restart", "from_step": 5000}]}
    return b.write(y, truth)
