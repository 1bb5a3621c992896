"""MosaicML Composer (llm-foundry) on 2 nodes: Xid 74 NVLink fatal error on one GPU during the in-training eval."""
import datetime as dt
import random

from common import Bundle, job_yaml, ts, nvidia_smi_q, dmesg_boot

ID = "composer-eval-xid74-nvlink"
HOSTS = [("a100-n17", "10.9.1.17"), ("a100-n18", "10.9.1.18")]
BAD, BADLR = 1, 3
SP = "/usr/lib/python3/dist-packages"
BUS = ["00000000:07:00.0", "00000000:0F:00.0", "00000000:47:00.0", "00000000:4E:00.0",
       "00000000:87:00.0", "00000000:90:00.0", "00000000:B7:00.0", "00000000:BD:00.0"]


def metrics(bt, r):
    loss = 1.95 - (bt - 1980) * 0.0006 + r.uniform(-0.02, 0.02)
    return [f"[batch={bt}/24800]:",
            f"\t Train time/batch: {bt - 1}",
            f"\t Train time/sample: {(bt - 1) * 256}",
            f"\t Train time/batch_in_epoch: {bt - 1}",
            f"\t Train time/token: {(bt - 1) * 256 * 2048}",
            "\t Train trainer/device_train_microbatch_size: 4",
            f"\t Train loss/train/total: {loss:.4f}",
            f"\t Train metrics/train/LanguageCrossEntropy: {loss:.4f}",
            f"\t Train throughput/batches_per_sec: {0.412 + r.uniform(-0.004, 0.004):.4f}",
            f"\t Train throughput/device/tokens_per_sec: {13480 + r.randint(-90, 90):.4f}",
            "\t Train time/train: %.4f" % (bt * 2.43 / 3600),
            "\t Train time/val: 0.1811"]


def build(root):
    b = Bundle(root, ID)
    r = random.Random(74)
    t0 = dt.datetime(2026, 11, 23, 9, 0, 12)
    tev = ts(t0, 2000 * 2.43 + 660)
    tx = ts(tev, 41.7)
    # node 0 console: launcher + global rank 0 output
    A = ["Distributed KWARGS: {'world_size': 16, 'base_rank': 0, 'node_rank': 0, 'master_addr': 'a100-n17', 'master_port': 7501}",
         "Starting distributed environment on local node for global_rank(0-7)",
         "Distributed KWARGS: {'world_size': 16, 'base_rank': 0, 'node_rank': 0, 'master_addr': 'a100-n17', 'master_port': 7501}",
         f"{SP}/composer/callbacks/speed_monitor.py:120: UserWarning: gpu_flop count not found for None with precision: amp_bf16; MFU cannot be calculated and reported. gpu_flops_available can be manually overridden by setting gpu_flops_available in SpeedMonitor.",
         "  warnings.warn(",
         f"{SP}/transformers/utils/generic.py:311: FutureWarning: `torch.utils._pytree._register_pytree_node` is deprecated. Please use `torch.utils._pytree.register_pytree_node` instead.",
         "  torch.utils._pytree._register_pytree_node(",
         "Building tokenizer...",
         "Building train loader...",
         "Building eval loader...",
         "Initializing model...",
         "cfg.n_params=6.65e+09",
         "Building trainer...",
         "Loading checkpoint from /mnt/ckpt/mpt7b-code/ep0-ba1500-rank0.pt",
         "Logging config...",
         "Starting training..."]
    for bt in range(1981, 2001):
        A += metrics(bt, r)
    for eb in (1, 9, 17, 25, 33):
        A.append(f"[Eval batch={eb}/64] Eval on eval data")
    # node 0 ranks fail after the NCCL peer disappears
    for lr in (0, 3):
        tt = ts(tx, 5.3 + lr * 0.01)
        A.append(f"a100-n17:{7711 + lr}:{8120 + lr} [{lr}] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer a100-n18<{41212 + lr}>")
    A += ["ERROR:composer.cli.launcher:Rank 3 crashed with exit code 1.",
          "Waiting up to 30 seconds for all training processes to terminate. Press Ctrl-C to exit immediately.",
          "Global rank 3 (PID 7714) exited with code 1",
          "----------Begin global rank 3 STDERR----------",
          "[rank3]: Traceback (most recent call last):",
          '[rank3]:   File "/llm-foundry/scripts/train/train.py", line 786, in <module>',
          "[rank3]:     main(cfg)",
          f'[rank3]:   File "{SP}/torchmetrics/metric.py", line 556, in _sync_dist',
          "[rank3]:     output_dict = apply_to_collection(",
          "[rank3]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote process exited or there was a network error, NCCL version 2.20.5",
          "[rank3]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
          "[rank3]: Last error:",
          "[rank3]: socketProgress: Connection closed by remote peer a100-n18<41215>",
          "----------End global rank 3 STDERR----------",
          "ERROR:composer.cli.launcher:Global rank 0 (PID 7711) exited with code -15",
          "ERROR:composer.cli.launcher:Global rank 1 (PID 7712) exited with code -15"]
    b.add("logs/a100-n17/composer-launcher.log", A)
    # node 1 console: launcher only (non-zero global ranks log to files) + dump of the crashed rank
    B = ["Distributed KWARGS: {'world_size': 16, 'base_rank': 8, 'node_rank': 1, 'master_addr': 'a100-n17', 'master_port': 7501}",
         "Starting distributed environment on local node for global_rank(8-15)",
         "ERROR:composer.cli.launcher:Rank 11 crashed with exit code 1.",
         "Waiting up to 30 seconds for all training processes to terminate. Press Ctrl-C to exit immediately.",
         "Global rank 11 (PID 88211) exited with code 1",
         "----------Begin global rank 11 STDOUT----------",
         "Building tokenizer...", "Building train loader...", "Building eval loader...", "Initializing model...",
         "cfg.n_params=6.65e+09", "Building trainer...", "Starting training...",
         "----------End global rank 11 STDOUT----------",
         "----------Begin global rank 11 STDERR----------",
         f"{SP}/transformers/utils/generic.py:311: FutureWarning: `torch.utils._pytree._register_pytree_node` is deprecated. Please use `torch.utils._pytree.register_pytree_node` instead.",
         "  torch.utils._pytree._register_pytree_node(",
         "[rank11]: Traceback (most recent call last):",
         '[rank11]:   File "/llm-foundry/scripts/train/train.py", line 786, in <module>',
         "[rank11]:     main(cfg)",
         '[rank11]:   File "/llm-foundry/scripts/train/train.py", line 765, in main',
         "[rank11]:     trainer.fit()",
         f'[rank11]:   File "{SP}/composer/trainer/trainer.py", line 2270, in fit',
         "[rank11]:     self._train_loop()",
         f'[rank11]:   File "{SP}/composer/trainer/trainer.py", line 2500, in _train_loop',
         "[rank11]:     self._run_evaluators(Event.BATCH_END)",
         f'[rank11]:   File "{SP}/composer/trainer/trainer.py", line 2585, in _run_evaluators',
         "[rank11]:     self._eval_loop(",
         f'[rank11]:   File "{SP}/composer/trainer/trainer.py", line 3470, in _eval_loop',
         "[rank11]:     self.state.outputs = self._original_model.eval_forward(self.state.batch)",
         f'[rank11]:   File "{SP}/composer/models/huggingface.py", line 471, in eval_forward',
         "[rank11]:     output = self.forward(batch)",
         f'[rank11]:   File "{SP}/torch/distributed/fsdp/fully_sharded_data_parallel.py", line 849, in forward',
         "[rank11]:     args, kwargs = _pre_forward(",
         f'[rank11]:   File "{SP}/torch/distributed/fsdp/_runtime_utils.py", line 381, in _pre_forward',
         "[rank11]:     unshard_fn(state, handle)",
         "[rank11]: RuntimeError: CUDA error: uncorrectable NVLink error was detected during the execution",
         "[rank11]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
         "[rank11]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
         "[rank11]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
         "[rank11]: ",
         "----------End global rank 11 STDERR----------",
         "ERROR:composer.cli.launcher:Global rank 8 (PID 88208) exited with code -15",
         "ERROR:composer.cli.launcher:Global rank 12 (PID 88212) exited with code -15"]
    b.add("logs/a100-n18/composer-launcher.log", B)
    # probes
    for i, (host, ip) in enumerate(HOSTS):
        d = dmesg_boot(ts(t0, -86400 * 5), host, seed=i)
        if i == BAD:
            s = "[" + tx.strftime("%a %b %d %H:%M:%S %Y") + "]"
            d += [f"{s} NVRM: Xid (PCI:0000:4e:00): 74, pid=88211, name=python, NVLink: fatal error detected on link 5(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
                  f"{s} NVRM: Xid (PCI:0000:4e:00): 74, pid=88211, name=python, NVLink: fatal error detected on link 4(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
                  f"{s} NVRM: Xid (PCI:0000:4e:00): 45, pid=88211, name=python, Ch 00000018"]
        b.add(f"probes/{host}/dmesg.txt", d)
        b.add(f"probes/{host}/nvidia-smi.txt", nvidia_smi_q(host, ts(tx, 300), BUS, product="NVIDIA A100-SXM4-80GB", seed=i + 70))
        nv = []
        for g in range(8):
            nv.append(f"GPU {g}: NVIDIA A100-SXM4-80GB (UUID: GPU-{random.Random(g + i * 8).getrandbits(32):08x}-5c1d-7e2f-9a0b-{random.Random(g).getrandbits(48):012x})")
            for link in range(12):
                badl = i == BAD and g == BADLR and link in (4, 5)
                nv += [f"\t Link {link}: Replay Errors: {217 if badl else 0}",
                       f"\t Link {link}: Recovery Errors: {3 if badl else 0}",
                       f"\t Link {link}: CRC Errors: {1893 if badl else 0}"]
        b.add(f"probes/{host}/nvlink-errors.txt", nv)
    b.mark("logs/a100-n18/composer-launcher.log", "[rank11]: RuntimeError: CUDA error: uncorrectable NVLink error")
    b.mark("probes/a100-n18/dmesg.txt", "fatal error detected on link 5")
    b.mark("probes/a100-n18/dmesg.txt", "fatal error detected on link 4")
    nodes = [(h, ip, list(range(i * 8, i * 8 + 8))) for i, (h, ip) in enumerate(HOSTS)]
    y = job_yaml("mpt7b-code-ft-1123", "mpt-7b-code-ft", "other", "failed", t0, ts(tx, 36), 1, 8,
                 (1, 1, 16, 1), nodes,
                 [("77d20e4", dt.datetime(2026, 11, 14, 10, 0), "foundry: v0.14 + code eval set"),
                  ("3b1af95", dt.datetime(2026, 11, 20, 18, 11), "foundry: eval_interval 500ba")],
                 [(1000, dt.datetime(2026, 11, 23, 6, 10), "/mnt/ckpt/mpt7b-code/ep0-ba1000-rank0.pt", True),
                  (1500, dt.datetime(2026, 11, 23, 8, 32), "/mnt/ckpt/mpt7b-code/ep0-ba1500-rank0.pt", True),
                  (2000, ts(tev, -20), "/mnt/ckpt/mpt7b-code/ep0-ba2000-rank0.pt", True)],
                 extra={"scheduler": "mosaicml-composer-launcher (ssh, 2 nodes)", "framework_detail": "composer 0.24 / llm-foundry 0.14, FSDP FULL_SHARD"})
    truth = {"fault": "nvlink_error", "category": "hardware",
             "root_cause": "GPU 3 (PCI 0000:4e:00) on a100-n18 hit Xid 74 fatal NVLink errors on links 4 and 5 during the eval that follows batch 2000; rank 11 died with 'uncorrectable NVLink error' and the launcher tore the job down",
             "faulty_nodes": ["a100-n18"], "stage": "eval", "iteration": 2001,
             "actions": [{"kind": "evict", "nodes": ["a100-n18"]}, {"kind": "restart", "from_step": 2000}]}
    return b.write(y, truth)
