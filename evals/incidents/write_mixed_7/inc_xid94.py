"""MosaicML Composer (llm-foundry train.py) launched with the `composer` launcher on 3 nodes x 8 H100, FSDP over 24
ranks. The launcher pipes local rank 0 to the node console and writes the other ranks to
--stdout/--stderr files (rank{rank}.stdout.txt / rank{rank}.stderr.txt). A contained uncorrectable ECC error
(Xid 94) on GPU 5 of mosaic-a02 kills global rank 13; that node's launcher reports it and dumps its stderr; the
other nodes' ranks die on the NCCL watchdog.
"""
import random
from datetime import timedelta

from common import Bundle, T, iso, dmesg_T, dmesg_boot, glog, nvsmi_q, gpu_list, watchdog

ID = "composer-launcher-xid94-contained-ecc-3node"
HOSTS = ["mosaic-a01", "mosaic-a02", "mosaic-a03"]
IPS = ["10.9.0.11", "10.9.0.12", "10.9.0.13"]
BAD, BAD_LR = 1, 5
BAD_RANK = BAD * 8 + BAD_LR
SP = "/usr/lib/python3/dist-packages"
FSDP_WARN = (f"{SP}/torch/distributed/fsdp/fully_sharded_data_parallel.py:690: FutureWarning: FSDP.state_dict_type() "
             "and FSDP.set_state_dict_type() are being deprecated. Please use APIs, get_state_dict() and set_state_dict(), "
             "which can support different parallelisms, FSDP1, FSDP2, DDP. API doc: https://pytorch.org/docs/stable/"
             "distributed.checkpoint.html#torch.distributed.checkpoint.state_dict.get_state_dict .Tutorial: "
             "https://pytorch.org/tutorials/recipes/distributed_checkpoint_recipe.html .")


def build(out_dir):
    random.seed(ID)
    b = Bundle(out_dir)
    t0 = T("2026-11-28T09:20:05")
    t_tr = T("2026-11-28T09:31:40")
    b0, last_done = 3001, 3027
    step_s = 3.81
    t_fault = t_tr + timedelta(seconds=(last_done - b0 + 1) * step_s + 2.2)
    t_wd = t_fault + timedelta(seconds=300.3)
    pids = {(n, lr): 61200 + 13 * n + lr for n in range(3) for lr in range(8)}
    if True:
        pids[(BAD, BAD_LR)] = 61213

    for n, h in enumerate(HOSTS):
        con = f"logs/{h}/composer_launch.log"
        C = [f"+ composer --world_size 24 --node_rank {n} --master_addr {IPS[0]} --master_port 7501 --stdout "
             f"/mnt/logs/run-7b/rank{{rank}}.stdout.txt --stderr /mnt/logs/run-7b/rank{{rank}}.stderr.txt "
             f"/workspace/llm-foundry/scripts/train/train.py /workspace/yamls/mpt-7b-continued.yaml autoresume=true"]
        for lr in range(8):
            r = n * 8 + lr
            warn = [FSDP_WARN, "  warnings.warn("]
            if lr == 0:
                C += warn
            else:
                b.add(f"logs/{h}/rank{r}.stderr.txt", list(warn))
                b.add(f"logs/{h}/rank{r}.stdout.txt", [f"Initializing model... (rank {r})",
                                                        "Building tokenizer...", "Building train loader...",
                                                        "Building trainer..."])
        if n == 0:
            C += ["Initializing model...", "Building tokenizer...", "Building train loader...", "Building eval loader...",
                  "Building trainer...", "Logging config", "Starting training...",
                  "******************************",
                  "Config:",
                  "composer_commit_hash: None",
                  "composer_version: 0.27.0",
                  "enabled_algorithms/GradientClipping: true",
                  "node_name: unknown because NODENAME environment variable not set",
                  "num_gpus_per_node: 8",
                  "num_nodes: 3",
                  "rank_zero_seed: 17",
                  "******************************"]
            for bt in range(b0, last_done + 1):
                loss = 2.04 - (bt - 3000) * 0.0003 + random.uniform(-0.03, 0.03)
                C += [f"[batch={bt}/20000]:",
                      f"\t Train time/batch: {bt - 1}",
                      f"\t Train time/sample: {(bt - 1) * 384}",
                      f"\t Train time/batch_in_epoch: {bt - 1}",
                      f"\t Train time/sample_in_epoch: {(bt - 1) * 384}",
                      f"\t Train time/token: {(bt - 1) * 384 * 2048}",
                      f"\t Train time/token_in_epoch: {(bt - 1) * 384 * 2048}",
                      f"\t Train memory/peak_allocated_mem: {61.2 + random.uniform(0, 0.1):.4f}",
                      "\t Train trainer/device_train_microbatch_size: 4",
                      f"\t Train loss/train/total: {loss:.4f}",
                      f"\t Train metrics/train/LanguageCrossEntropy: {loss:.4f}",
                      f"\t Train metrics/train/LanguagePerplexity: {2.718281828 ** loss:.4f}",
                      f"\t Train throughput/batches_per_sec: {1 / (step_s + random.uniform(-0.03, 0.03)):.4f}",
                      f"\t Train lr-DecoupledAdamW/group0: {6e-5 * (1 - (bt - 3000) / 17000):.4e}",
                      f"\t Train time/train: {(bt - 1) * step_s / 3600:.4f}",
                      "\t Train time/val: 0.0000",
                      f"\t Train time/total: {(bt - 1) * step_s / 3600:.4f}"]
        b.add(con, C)

    # the faulty rank's own stderr
    bad_h = HOSTS[BAD]
    fr = "/workspace/llm-foundry"
    tb = ["Traceback (most recent call last):",
          f'  File "{fr}/scripts/train/train.py", line 9, in <module>',
          "    train_from_yaml(yaml_path, args_list)",
          f'  File "{fr}/llmfoundry/command_utils/train.py", line 597, in train_from_yaml',
          "    return train(yaml_cfg)",
          f'  File "{fr}/llmfoundry/command_utils/train.py", line 580, in train',
          "    trainer.fit()",
          f'  File "{SP}/composer/trainer/trainer.py", line 2359, in fit',
          "    self._train_loop()",
          f'  File "{SP}/composer/trainer/trainer.py", line 2580, in _train_loop',
          "    total_loss_dict = self._train_batch(use_grad_scaling)",
          f'  File "{SP}/composer/trainer/trainer.py", line 2852, in _train_batch',
          "    optimizer.step(",
          f'  File "{SP}/torch/optim/optimizer.py", line 487, in wrapper',
          "    out = func(*args, **kwargs)",
          f'  File "{SP}/composer/optim/decoupled_weight_decay.py", line 305, in step',
          "    self.adamw(",
          f'  File "{SP}/composer/optim/decoupled_weight_decay.py", line 250, in adamw',
          "    exp_avg.lerp_(grad, 1 - beta1)",
          "RuntimeError: CUDA error: uncorrectable ECC error encountered",
          "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
          "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
          "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
          ""]
    errf = f"logs/{bad_h}/rank{BAD_RANK}.stderr.txt"
    b.add(errf, tb)
    b.mark(errf, "RuntimeError: CUDA error: uncorrectable ECC error encountered")
    # launcher on the faulty node
    so = b.files[f"logs/{bad_h}/rank{BAD_RANK}.stdout.txt"]
    se = b.files[errf]
    pid = pids[(BAD, BAD_LR)]
    b.add(f"logs/{bad_h}/composer_launch.log", [
        f"ERROR:composer.cli.launcher:Rank {BAD_RANK} crashed with exit code 1.",
        "Waiting up to 30 seconds for all training processes to terminate. Press Ctrl-C to exit immediately.",
        f"Global rank {BAD_RANK} (PID {pid}) exited with code 1",
        f"----------Begin global rank {BAD_RANK} STDOUT----------"] + so + [
        "",
        f"----------End global rank {BAD_RANK} STDOUT----------",
        f"----------Begin global rank {BAD_RANK} STDERR----------"] + se + [
        f"----------End global rank {BAD_RANK} STDERR----------",
        f"ERROR:composer.cli.launcher:Global rank {BAD_RANK} (PID {pid}) exited with code 1"])
    # healthy nodes: their local rank 0 aborts on the watchdog; the launcher reports it
    for n in (0, 2):
        h = HOSTS[n]
        r = n * 8
        wd = watchdog(r, t_wd, 41877, "_REDUCE_SCATTER_BASE", 81264640, 300000)
        b.add(f"logs/{h}/composer_launch.log", wd + [
            f"ERROR:composer.cli.launcher:Rank {r} crashed with exit code -6.",
            "Waiting up to 30 seconds for all training processes to terminate. Press Ctrl-C to exit immediately.",
            f"Global rank {r} (PID {pids[(n, 0)]}) exited with code -6",
            f"ERROR:composer.cli.launcher:Global rank {r} (PID {pids[(n, 0)]}) exited with code -6"])
        for lr in range(1, 8):
            b.add(f"logs/{h}/rank{r + lr}.stderr.txt", watchdog(r + lr, t_wd, 41877, "_REDUCE_SCATTER_BASE", 81264640, 300000)[:2])

    # probes
    for n, h in enumerate(HOSTS):
        d = dmesg_boot(h, T("2026-11-25T10:00:12"))
        if n == BAD:
            d += [f"{dmesg_T(t_fault)} NVRM: Xid (PCI:0000:ab:00): 94, pid={pid}, name=python, Contained: SM (0x1). RST: No, D-RST: No",
                  f"{dmesg_T(t_fault)} NVRM: Xid (PCI:0000:ab:00): 63, pid={pid}, name=python, Row Remapper: New row "
                  f"marked for remapping, reset gpu to activate."]
            b.mark(f"probes/{h}/dmesg.txt", "): 94, pid=")
        b.add(f"probes/{h}/dmesg.txt", d)
        per = {BAD_LR: {"ecc_dram_unc_vol": 1, "ecc_dram_unc_agg": 1, "remap_unc": 1, "remap_pending": True}} if n == BAD else {}
        if n == BAD:
            smi = nvsmi_q(t_wd + timedelta(minutes=6), gpu_list(h, per=per), sections=("ecc", "temp"))
            b.add(f"probes/{h}/nvidia-smi.txt", smi)
    smi_f = f"probes/{HOSTS[BAD]}/nvidia-smi.txt"
    b.mark(smi_f, "            DRAM Uncorrectable            : 1")
    b.mark(smi_f, "        Pending                           : Yes")

    t_end = t_wd + timedelta(seconds=31)
    job = f"""
job_id: "mpt7b-cont-0412"
name: mpt-7b-continued-pretrain
framework: other
framework_detail: composer (llm-foundry)
status: failed
started_at: {iso(t0)}
ended_at: {iso(t_end)}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 24, cp: 1, ep: 1}}
launcher: composer
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(i * 8 + k) for k in range(8))}]}}\n"
              for i, h in enumerate(HOSTS)) + """code:
  - {commit: 48d21ce, at: 2026-11-18T12:00:00Z, message: "foundry: mpt-7b continued pretrain yaml"}
checkpoints:
  - {step: 2500, at: 2026-11-28T05:58:12Z, path: s3://ckpt/mpt-7b-cont/ep0-ba2500-rank0.pt, valid: true}
  - {step: 3000, at: 2026-11-28T09:14:50Z, path: s3://ckpt/mpt-7b-cont/ep0-ba3000-rank0.pt, valid: true}
spares: 1
"""
    truth = {
        "fault": "gpu_ecc_uncorrectable",
        "category": "hardware",
        "root_cause": "contained uncorrectable ECC error (Xid 94, row marked for remapping) on GPU 5 (PCI 0000:ab:00) of "
                      "mosaic-a02 killed global rank 13 in the optimizer step; the other ranks hit the NCCL watchdog",
        "faulty_nodes": [HOSTS[BAD]],
        "stage": "training",
        "iteration": last_done + 1,
        "actions": [{"kind": "evict", "nodes": [HOSTS[BAD]]}, {"kind": "restart", "from_step": 3000}],
    }
    return b.write(job, truth)
