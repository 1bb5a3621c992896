"""SkyPilot managed job logs (`(head, rank=0, pid=...)` / `(worker1, rank=1, pid=..., ip=...)`), Colossal-AI
HybridParallel, a new commit's collate function raises KeyError on every rank at the first step after resume."""
import datetime as dt
from common import Bundle, yaml_job, iso, torchrun_child_failed

ID = "skypilot-colossalai-keyerror-new-commit-2node"
NODES = [("sky-3f1a-ml-head", "10.128.0.40", "head", 4121), ("sky-3f1a-ml-worker1", "10.128.0.41", "worker1", 3980)]
RESUME = 8000


def build(out):
    b = Bundle(out, seed=57)
    r = b.rng
    t0 = dt.datetime(2026, 3, 5, 14, 1, 2)
    files = {n: f"logs/{NODES[n][0]}/sky-jobs-logs-57.log" for n in range(2)}

    def S(n, text, mark=False):
        h, ip, name, pid = NODES[n]
        pre = f"({name}, rank={n}, pid={pid})" if n == 0 else f"({name}, rank={n}, pid={pid}, ip={ip})"
        return b.add(files[n], f"{pre} {text}", mark)

    b.add(files[0], "├── Waiting for task resources on 2 nodes.")
    b.add(files[0], "└── Job started. Streaming logs... (Ctrl-C to exit log streaming; job will not be killed)")
    b.add(files[0], "(setup pid=3377) Requirement already satisfied: colossalai==0.4.6 in /opt/conda/lib/python3.10/site-packages (0.4.6)")
    b.add(files[1], "(setup pid=3214, ip=10.128.0.41) Requirement already satisfied: colossalai==0.4.6 in /opt/conda/lib/python3.10/site-packages (0.4.6)")
    cx = lambda s: f"[{(t0 + dt.timedelta(seconds=s)):%m/%d/%y %H:%M:%S}]"
    for n in range(2):
        S(n, f"+ torchrun --nnodes=2 --nproc_per_node=8 --node_rank={n} --master_addr=10.128.0.40 --master_port=29500 applications/Colossal-LLaMA/train.py --pretrained /mnt/sky-ckpt/base/llama2-13b --dataset /mnt/sky-data/sft-packed-v2 --plugin 3d --tp 4 --zero_stage 1 --batch_size 4 --lr 2e-5 --load_checkpoint /mnt/sky-ckpt/run-0305/epoch-0_step-{RESUME} --save_interval 1000 --save_dir /mnt/sky-ckpt/run-0305")
        S(n, "W0305 14:01:09.214000 140338 torch/distributed/run.py:793] ")
        S(n, "W0305 14:01:09.214000 140338 torch/distributed/run.py:793] *****************************************")
        S(n, "W0305 14:01:09.214000 140338 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ")
        S(n, "W0305 14:01:09.214000 140338 torch/distributed/run.py:793] *****************************************")
        for k in range(8):
            S(n, "/opt/conda/lib/python3.10/site-packages/colossalai/shardformer/layer/normalization.py:45: UserWarning: Please install apex from source (https://github.com/NVIDIA/apex) to use the fused layernorm kernel")
            S(n, '  warnings.warn("Please install apex from source (https://github.com/NVIDIA/apex) to use the fused layernorm kernel")')
        if n == 0:
            S(n, f"{cx(21)} INFO     colossalai - colossalai - INFO: /opt/conda/lib/python3.10/site-packages/colossalai/initialize.py:75 launch")
            S(n, "                    INFO     colossalai - colossalai - INFO: Distributed environment is initialized, world size: 16")
            S(n, "Model params: 13.02 B")
            S(n, "Booster init max device memory: 14233.19 MB")
            S(n, "Booster init max CPU memory: 41802.66 MB")
            S(n, f"Loading checkpoint from /mnt/sky-ckpt/run-0305/epoch-0_step-{RESUME}")
            S(n, f"Loaded checkpoint /mnt/sky-ckpt/run-0305/epoch-0_step-{RESUME} at epoch 0 step {RESUME}")
            S(n, "Checkpoint loaded max device memory: 29871.40 MB")
            S(n, "Checkpoint loaded max CUDA memory: 31022.00 MB")
            S(n, "Checkpoint loaded max CPU memory: 88120.91 MB")
            S(n, "Epoch 0:  71%|#######1  | 8000/11250 [00:00<?, ?it/s]")
    pids = {0: [4190 + 3 * k for k in range(8)], 1: [4011 + 3 * k for k in range(8)]}
    for n in range(2):
        for k in ([0, 3, 6] if n == 0 else [0, 5]):
            rank = 8 * n + k
            tb = [f"[rank{rank}]: Traceback (most recent call last):",
                  f'[rank{rank}]:   File "/home/sky/sky_workdir/applications/Colossal-LLaMA/train.py", line 471, in <module>',
                  f"[rank{rank}]:     train(args)",
                  f'[rank{rank}]:   File "/home/sky/sky_workdir/applications/Colossal-LLaMA/train.py", line 356, in train',
                  f"[rank{rank}]:     batch = next(dataloader_iter)",
                  f'[rank{rank}]:   File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 701, in __next__',
                  f"[rank{rank}]:     data = self._next_data()",
                  f'[rank{rank}]:   File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 1465, in _next_data',
                  f"[rank{rank}]:     return self._process_data(data)",
                  f'[rank{rank}]:   File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 1491, in _process_data',
                  f"[rank{rank}]:     data.reraise()",
                  f'[rank{rank}]:   File "/opt/conda/lib/python3.10/site-packages/torch/_utils.py", line 715, in reraise',
                  f"[rank{rank}]:     raise exception",
                  f"[rank{rank}]: KeyError: Caught KeyError in DataLoader worker process 0.",
                  f"[rank{rank}]: Original Traceback (most recent call last):",
                  f'[rank{rank}]:   File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 351, in _worker_loop',
                  f"[rank{rank}]:     data = fetcher.fetch(index)  # type: ignore[possibly-undefined]",
                  f'[rank{rank}]:   File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/fetch.py", line 55, in fetch',
                  f"[rank{rank}]:     return self.collate_fn(data)",
                  f'[rank{rank}]:   File "/home/sky/sky_workdir/applications/Colossal-LLaMA/colossal_llama/dataset/loader.py", line 118, in __call__',
                  f'[rank{rank}]:     position_ids = [torch.as_tensor(ins["position_ids"][: self.max_length]) for ins in instances]',
                  f'[rank{rank}]:   File "/home/sky/sky_workdir/applications/Colossal-LLaMA/colossal_llama/dataset/loader.py", line 118, in <listcomp>',
                  f'[rank{rank}]:     position_ids = [torch.as_tensor(ins["position_ids"][: self.max_length]) for ins in instances]',
                  f"[rank{rank}]: KeyError: 'position_ids'",
                  f"[rank{rank}]: "]
            for j, x in enumerate(tb):
                S(n, x, mark=(k == 0 and j == len(tb) - 2))
        S(n, f"W0305 14:03:41.{90000 + n:06d} 140338 torch/distributed/elastic/multiprocessing/api.py:897] Sending process {pids[n][1]} closing signal SIGTERM")
        S(n, f"E0305 14:03:42.{310000 + n:06d} 140338 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: {pids[n][0]}) of binary: /opt/conda/bin/python3.10")
        fails = [{"rank": 8 * n + k, "local_rank": k, "exitcode": 1, "pid": pids[n][k], "traceback": None} for k in range(1, 8)]
        for x in torchrun_child_failed("applications/Colossal-LLaMA/train.py", "2026-03-05_14:03:41", NODES[n][0], fails[:3],
                                       {"rank": 8 * n, "local_rank": 0, "exitcode": 1, "pid": pids[n][0], "traceback": None}):
            S(n, x.replace("/usr/local/lib/python3.10/dist-packages", "/opt/conda/lib/python3.10/site-packages").replace("/usr/local/bin/torchrun", "/opt/conda/bin/torchrun"))
    b.add(files[0], "ERROR: Job 1 failed with return code list: [1, 1]")
    job = {
        "job_id": "57", "name": "llama2-13b-sft-packed", "framework": "other", "status": "failed",
        "started_at": iso(t0), "ended_at": "2026-03-05T14:03:50Z", "exit_code": 1, "gpus_per_node": 8,
        "parallelism": {"tp": 4, "pp": 1, "dp": 4, "cp": 1, "ep": 1},
        "scheduler": "skypilot managed job (sky jobs launch), 2x A100-80GB:8",
        "trainer": "colossalai 0.4.6 HybridParallelPlugin via torchrun",
        "nodes": [{"host": h, "ip": ip, "sky_node": nm, "ranks": list(range(8 * n, 8 * n + 8))} for n, (h, ip, nm, _) in enumerate(NODES)],
        "code": [{"commit": "2ab71f3", "at": "2026-02-24T11:05:00Z", "message": "sft: llama2-13b 3d plugin tp4"},
                 {"commit": "e0d94c6", "at": "2026-02-28T17:32:00Z", "message": "eval: add mmlu-subset every 2k steps"},
                 {"commit": "7d2f9ab", "at": "2026-03-05T13:40:00Z", "message": "dataset: packed sequences with per-document position_ids"}],
        "checkpoints": [{"step": 7000, "at": "2026-03-04T21:10:00Z", "path": "/mnt/sky-ckpt/run-0305/epoch-0_step-7000", "valid": True},
                        {"step": 8000, "at": "2026-03-04T23:52:00Z", "path": "/mnt/sky-ckpt/run-0305/epoch-0_step-8000", "valid": True}],
        "spares": 0, "history": ["55", "56"], "last_successful_run_ended_at": "2026-03-05T00:05:00Z",
    }
    truth = {
        "fault": "user_code_exception", "category": "user_code",
        "root_cause": "commit 7d2f9ab changed the collate function to read a per-document 'position_ids' field that the existing packed dataset /mnt/sky-data/sft-packed-v2 does not have; the first batch after resuming raised KeyError: 'position_ids' in a DataLoader worker on every rank of both nodes",
        "faulty_nodes": [], "stage": "training", "iteration": RESUME + 1,
        "actions": [{"kind": "rollback", "to_commit": "e0d94c6"}],
    }
    return b.write(yaml_job(job), truth)
