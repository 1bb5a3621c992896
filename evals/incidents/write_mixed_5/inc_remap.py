"""GPU row-remap pending (Xid 63, nvidia-smi 'Pending: Yes') hours before the job died of an uncorrectable ECC error.
PyTorch Lightning with RichProgressBar; srun --output=train-%j-%N.log, one file per node, no rank prefix."""
import random
from common import Bundle, Ind, hms

IID = "lightning-rich-a100-remap-pending-xid63-2node"
HOSTS = ["a100-r2n13", "a100-r2n14"]
IPS = ["10.31.2.13", "10.31.2.14"]
BAD, BADGPU = 1, 5
BUS = ["07", "0F", "47", "4E", "87", "90", "B7", "BD"]
JOB = "771920"
SPE = 2500                 # steps per epoch
LAST_OK = 7 * SPE + 1873   # global step last completed
PY = "/usr/local/lib/python3.10/dist-packages"
T_START = 22 * 3600 + 5 * 60     # 2026-11-26 22:05
T_X63 = 2 * 3600 + 14 * 60 + 51  # 2026-11-27 02:14:51
T_CRASH = 6 * 3600 + 40 * 60 + 17


def bar(done, total, width=40):
    k = int(width * done / total)
    return "━" * k + ("╸" if k < width else "") + "━" * max(0, width - k - 1)


def build(root):
    b = Bundle(root, IID)
    rnd = random.Random(63)
    for n, h in enumerate(HOSTS):
        L = []
        if n == 0:
            L += ["Using bfloat16 Automatic Mixed Precision (AMP)", "GPU available: True (cuda), used: True",
                  "TPU available: False, using: 0 TPU cores", "HPU available: False, using: 0 HPUs"]
        for lr in range(8):
            r = 8 * n + lr
            L.append(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/16")
        if n == 0:
            L += ["-" * 100, "distributed_backend=nccl", "All distributed processes registered. Starting with 16 processes", "-" * 100, ""]
            L.append("You are using a CUDA device ('NVIDIA A100-SXM4-80GB') that has Tensor Cores. To properly utilize them, you should set `torch.set_float32_matmul_precision('medium' | 'high')` which will trade-off precision for performance. For more details, read https://pytorch.org/docs/stable/generated/torch.set_float32_matmul_precision.html#torch.set_float32_matmul_precision")
            L.append("Restoring states from the checkpoint path at /lustre/ckpt/seg-vit/epoch=4-step=12500.ckpt")
        for lr in range(8):
            L.append(f"LOCAL_RANK: {lr} - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]")
        if n == 0:
            L += ["┏━━━┳━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━┓",
                  "┃   ┃ Name      ┃ Type                 ┃ Params ┃ Mode  ┃",
                  "┡━━━╇━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━┩",
                  "│ 0 │ backbone  │ VisionTransformer    │  632 M │ train │",
                  "│ 1 │ decoder   │ UperNetHead          │ 41.2 M │ train │",
                  "│ 2 │ criterion │ CrossEntropyLoss     │      0 │ train │",
                  "└───┴───────────┴──────────────────────┴────────┴───────┘",
                  "Trainable params: 673 M", "Non-trainable params: 0", "Total params: 673 M",
                  "Total estimated model params size (MB): 2.7 K", "Modules in train mode: 412", "Modules in eval mode: 0",
                  "Restored all states from the checkpoint at /lustre/ckpt/seg-vit/epoch=4-step=12500.ckpt",
                  f"{PY}/lightning/pytorch/trainer/connectors/data_connector.py:424: The 'val_dataloader' does not have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument` to `num_workers=11` in the `DataLoader` to improve performance."]
            for ep in range(5, 8):
                last = SPE if ep < 7 else LAST_OK - 7 * SPE
                for s in list(range(0, last, 125)) + [last]:
                    if s == 0:
                        continue
                    el = s * 1.21
                    rem = (SPE - s) * 1.21
                    loss = 1.02 - 0.03 * ep - s * 1e-6 + rnd.uniform(-0.04, 0.04)
                    L.append(f"Epoch {ep}/19 {bar(s, SPE)} {s}/{SPE} {int(el // 3600)}:{int(el % 3600 // 60):02d}:{int(el % 60):02d} • "
                             f"{int(rem // 3600)}:{int(rem % 3600 // 60):02d}:{int(rem % 60):02d} 0.83it/s v_num: 2 train_loss: {loss:.3f}")
                if ep < 7:
                    L.append(f"Epoch {ep}/19 {bar(SPE, SPE)} {SPE}/{SPE} 0:50:25 • 0:00:00 0.83it/s v_num: 2 train_loss: {loss:.3f} val_miou: {0.471 + 0.006 * ep:.3f}")
                    L.append(f"Epoch {ep}, global step {SPE * (ep + 1)}: 'val_miou' reached {0.471 + 0.006 * ep:.5f} (best {0.471 + 0.006 * ep:.5f}), saving model to '/lustre/ckpt/seg-vit/epoch={ep}-step={SPE * (ep + 1)}.ckpt' as top 3")
        # the crash (after the crash, the healthy ranks wait in the next allreduce)
        if n == BAD:
            L += ["Traceback (most recent call last):",
                  '  File "/workspace/seg/train.py", line 148, in <module>', "    trainer.fit(model, datamodule=dm, ckpt_path=args.resume)",
                  f'  File "{PY}/lightning/pytorch/trainer/trainer.py", line 538, in fit', "    call._call_and_handle_interrupt(",
                  f'  File "{PY}/lightning/pytorch/trainer/call.py", line 46, in _call_and_handle_interrupt', "    return trainer.strategy.launcher.launch(trainer_fn, *args, trainer=trainer, **kwargs)",
                  f'  File "{PY}/lightning/pytorch/loops/optimization/automatic.py", line 319, in _training_step',
                  '    training_step_output = call._call_strategy_hook(trainer, "training_step", *kwargs.values())',
                  '  File "/workspace/seg/model.py", line 97, in training_step', "    logits = self.decoder(self.backbone(images))",
                  f'  File "{PY}/torch/nn/modules/module.py", line 1747, in _call_impl', "    return forward_call(*args, **kwargs)",
                  f'  File "{PY}/timm/models/vision_transformer.py", line 92, in forward', "    x = F.scaled_dot_product_attention(",
                  Ind("RuntimeError: CUDA error: uncorrectable ECC error encountered"),
                  "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                  "For debugging consider passing CUDA_LAUNCH_BLOCKING=1", "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", ""]
        for lr in range(8):
            r = 8 * n + lr
            if n == BAD and lr == BADGPU:
                continue
            if lr % 3 == 0 or r == 0:
                L.append(f"[rank{r}]:[E1127 {hms(T_CRASH + 600)}.{rnd.randint(100000, 999999)} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=982214, OpType=ALLREDUCE, NumelIn=41943040, NumelOut=41943040, Timeout(ms)=600000) ran for 600042 milliseconds before timing out.")
        if n == 0:
            L.append(f"srun: error: {HOSTS[BAD]}: task {8 * BAD + BADGPU}: Exited with exit code 1")
            L.append(f"srun: error: {HOSTS[0]}: tasks 0-7: Aborted (core dumped)")
        b.write(f"logs/{h}/train-{JOB}-{h}.log", L)
    # probes
    for n, h in enumerate(HOSTS):
        d = [f"[Thu Nov 26 21:52:{10 + n:02d} 2026] nvidia-nvswitch: Probing device 0000:05:00.0, Vendor Id = 0x10de, Device Id = 0x1af1, Class = 0x68000",
             f"[Thu Nov 26 21:52:31 2026] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.08  Thu Mar  7 08:13:09 UTC 2026",
             f"[Thu Nov 26 21:53:02 2026] nvidia-fabricmanager[4112]: Successfully configured all the available NVSwitches to route GPU NVLink traffic."]
        if n == BAD:
            d.append(Ind(f"[Fri Nov 27 {hms(T_X63)} 2026] NVRM: Xid (PCI:0000:{BUS[BADGPU].lower()}:00): 63, pid=2210331, name=python, Row Remapper: New row marked for remapping, reset gpu to activate."))
            d.append(f"[Fri Nov 27 {hms(T_CRASH - 1)} 2026] NVRM: Xid (PCI:0000:{BUS[BADGPU].lower()}:00): 94, pid=2210331, name=python, Contained: CE User Channel (0x9). RST: No, D-RST: No")
            d[-1] = Ind(d[-1])
            d.append(f"[Fri Nov 27 {hms(T_CRASH - 1)} 2026] NVRM: Xid (PCI:0000:{BUS[BADGPU].lower()}:00): 63, pid=2210331, name=python, Row Remapper: New row marked for remapping, reset gpu to activate.")
        d.append(f"[Fri Nov 27 {hms(T_CRASH - 7200 + 60 * n)} 2026] systemd-journald[812]: Data hash table of /var/log/journal/b51e0f3c/system.journal has a fill level at 75.0 (8535 of 11377 items, 6553600 file size, 767 bytes per hash table item), suggesting rotation.")
        b.write(f"probes/{h}/dmesg.txt", d)
        s = ["", "==============NVSMI LOG==============", "", "Timestamp                                 : Fri Nov 27 07:02:44 2026",
             "Driver Version                            : 535.161.08", "CUDA Version                              : 12.2", "",
             "Attached GPUs                             : 8"]
        for gi in range(8):
            bad = n == BAD and gi == BADGPU
            s += [f"GPU 00000000:{BUS[gi]}:00.0", "    Product Name                          : NVIDIA A100-SXM4-80GB",
                  f"    GPU UUID                              : GPU-{'%08x' % (0x5e1c0000 + 16 * n + gi)}-77c1-2b9e-a3d0-{'%012x' % (0x91f2a4000 + gi)}",
                  f"    Minor Number                          : {gi}",
                  "    ECC Mode", "        Current                           : Enabled", "        Pending                           : Enabled",
                  "    ECC Errors", "        Volatile", "            SRAM Correctable              : 0", "            SRAM Uncorrectable            : 0",
                  f"            DRAM Correctable              : {3 if bad else 0}", f"            DRAM Uncorrectable            : {1 if bad else 0}",
                  "        Aggregate", "            SRAM Correctable              : 0", "            SRAM Uncorrectable            : 0",
                  f"            DRAM Correctable              : {11 if bad else 0}", f"            DRAM Uncorrectable            : {2 if bad else 0}",
                  "    Retired Pages", "        Single Bit ECC                    : N/A", "        Double Bit ECC                    : N/A",
                  "        Pending Page Blacklist            : N/A",
                  "    Remapped Rows", f"        Correctable Error                 : 0", f"        Uncorrectable Error               : {2 if bad else 0}"]
            p = f"        Pending                           : {'Yes' if bad else 'No'}"
            s.append(Ind(p) if bad else p)
            s += ["        Remapping Failure Occurred        : No", "        Bank Remap Availability Histogram",
                  f"            Max                           : {638 if bad else 640} bank(s)", f"            High                          : {2 if bad else 0} bank(s)",
                  "            Partial                       : 0 bank(s)", "            Low                           : 0 bank(s)",
                  "            None                          : 0 bank(s)", ""]
        b.write(f"probes/{h}/nvidia-smi.txt", s)
    b.job(f"""
job_id: "{JOB}"
name: seg-vit-g-upernet
framework: other
launcher: "sbatch -N2 --ntasks-per-node=8 --gpus-per-node=8: srun --output=train-%j-%N.log python train.py (PyTorch Lightning 2.4, RichProgressBar)"
status: failed
started_at: 2026-11-26T{hms(T_START)}Z
ended_at: 2026-11-27T{hms(T_CRASH + 641)}Z
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
nodes:
  - {{host: {HOSTS[0]}, ip: {IPS[0]}, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}}
  - {{host: {HOSTS[1]}, ip: {IPS[1]}, ranks: [8, 9, 10, 11, 12, 13, 14, 15]}}
code:
  - {{commit: 47ab0e9, at: 2026-11-12T09:40:00Z, message: "upernet: aux head weight 0.4"}}
  - {{commit: d90c3f1, at: 2026-11-21T14:22:00Z, message: "data: ade20k + coco-stuff mix"}}
checkpoints:
  - {{step: 12500, at: 2026-11-26T21:40:00Z, path: "/lustre/ckpt/seg-vit/epoch=4-step=12500.ckpt", valid: true}}
  - {{step: 15000, at: 2026-11-26T23:01:12Z, path: "/lustre/ckpt/seg-vit/epoch=5-step=15000.ckpt", valid: true}}
  - {{step: 17500, at: 2026-11-27T03:52:40Z, path: "/lustre/ckpt/seg-vit/epoch=6-step=17500.ckpt", valid: true}}
spares: 1
""")
    b.truth(fault="gpu_row_remap_pending", category="hardware",
            root_cause="GPU 5 (0000:90:00.0) of a100-r2n14 logged Xid 63 (row marked for remapping, reset needed) at 02:14 and kept running with the remap pending (nvidia-smi: Remapped Rows Pending: Yes); at 06:40 an uncorrectable ECC error on it (Xid 94) killed rank 13 and the other ranks timed out in their allreduce",
            faulty_nodes=[HOSTS[BAD]], stage="training", iteration=LAST_OK + 1,
            actions=[{"kind": "evict", "nodes": [HOSTS[BAD]]}, {"kind": "restart", "from_step": 17500}])
    return b
