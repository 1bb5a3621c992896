"""PyTorch Lightning (FSDP, RichProgressBar) on Slurm, 4 nodes x 8 H100, one sbatch output file for all tasks.
Port 1 of mlx5_2 on lt-gpu-07 retrained once (Link DOWN/INIT/ACTIVE) and came back at a lower rate (ibstat Rate 100
instead of 400): no error, but from global step 17021 the whole job runs at ~0.82 it/s instead of ~1.95 it/s.
"""
import random
from datetime import timedelta

from common import Bundle, T, iso, dmesg_T, dmesg_boot, ibstat, perfquery_x

ID = "lightning-rich-ib-rate-degraded-4node"
JOB = "40991"
HOSTS = ["lt-gpu-05", "lt-gpu-06", "lt-gpu-07", "lt-gpu-08"]
IPS = ["10.60.3.5", "10.60.3.6", "10.60.3.7", "10.60.3.8"]
BAD, BAD_HCA = 2, 2
SP = "/opt/venv/lib/python3.11/site-packages"
PER_EPOCH = 6250


def rich_bar(ep, step, el, rem, rate, loss):
    w = 40
    done = step / PER_EPOCH * w
    full = int(done)
    head = "╸" if done - full >= 0.5 else ""
    bar = "━" * full + head
    bar = bar + ("╺" if not head and full < w else "") + "━" * (w - len(bar) - (0 if head or full >= w else 1))
    return (f"Epoch {ep}/9  {bar} {step}/{PER_EPOCH} {str(timedelta(seconds=int(el)))} • "
            f"{str(timedelta(seconds=int(rem)))} {rate:.2f}it/s v_num: 7 train_loss: {loss:.3f}")


def build(out_dir):
    random.seed(ID)
    b = Bundle(out_dir)
    LOG = f"logs/{HOSTS[0]}/train-{JOB}.out"
    t0 = T("2026-11-28T03:40:12")
    t_ep2 = T("2026-11-28T05:31:55")        # epoch 2 started (global step 12500)
    fast, slow = 1.95, 0.82
    slow_from = 4521                          # step in epoch 2 of the first slow batch -> global 17021
    t_event = t_ep2 + timedelta(seconds=(slow_from - 1) / fast + 0.4)

    def t_of(step):
        if step < slow_from:
            return t_ep2 + timedelta(seconds=step / fast)
        return t_event + timedelta(seconds=(step - slow_from + 1) / slow)

    L = ["GPU available: True (cuda), used: True", "TPU available: False, using: 0 TPU cores",
         "HPU available: False, using: 0 HPUs"]
    for r in range(32):
        L.append(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/32")
    L += ["----------------------------------------------------------------------------------------------------",
          "distributed_backend=nccl", "All distributed processes registered. Starting with 32 processes",
          "----------------------------------------------------------------------------------------------------", ""]
    for n in range(4):
        for lr in range(8):
            L.append(f"LOCAL_RANK: {lr} - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]")
    L += ["Restoring states from the checkpoint path at /lustre/lt/ckpt/tinyllama-1b/epoch=1-step=12500.ckpt",
          "┏━━━┳━━━━━━━┳━━━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━┓",
          "┃   ┃ Name  ┃ Type             ┃ Params ┃ Mode  ┃",
          "┡━━━╇━━━━━━━╇━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━┩",
          "│ 0 │ model │ LlamaForCausalLM │  1.1 B │ train │",
          "└───┴───────┴──────────────────┴────────┴───────┘",
          "Trainable params: 1.1 B", "Non-trainable params: 0", "Total params: 1.1 B",
          "Total estimated model params size (MB): 4.4 K", "Modules in train mode: 335", "Modules in eval mode: 0",
          "Restored all states from the checkpoint at /lustre/lt/ckpt/tinyllama-1b/epoch=1-step=12500.ckpt",
          f"{SP}/torch/distributed/fsdp/_state_dict_utils.py:773: UserWarning: When using ``NO_SHARD`` for "
          f"``ShardingStrategy``, full_state_dict will be returned.",
          "  warnings.warn("]
    el0 = 0
    for step in list(range(100, 6251, 100)):
        if t_of(step) > t_event + timedelta(seconds=830):
            break
        if step <= 4500:
            rate = fast + random.uniform(-0.02, 0.02)
        elif step == 4600:
            rate = 1.11
        else:
            rate = slow + random.uniform(-0.01, 0.01)
        el = (t_of(step) - t_ep2).total_seconds()
        rem = (PER_EPOCH - step) / rate
        loss = 2.38 - (12500 + step) * 0.000018 + random.uniform(-0.03, 0.03)
        L.append(rich_bar(2, step, el, rem, rate, loss))
        if step == 3500:
            L.append("Epoch 2, global step 16000: 'train_loss' reached 2.08917 (best 2.08917), saving model to "
                     "'/lustre/lt/ckpt/tinyllama-1b/epoch=2-step=16000.ckpt' as top 3")
    b.add(LOG, L)

    for n, h in enumerate(HOSTS):
        d = dmesg_boot(h, T("2026-11-26T08:10:37"))
        if n == BAD:
            pci = "0000:3b:00.0"
            d += [f"{dmesg_T(t_event - timedelta(seconds=1))} mlx5_core {pci} mlx5_{BAD_HCA}: Port: 1 Link DOWN",
                  f"{dmesg_T(t_event + timedelta(seconds=2))} mlx5_core {pci} mlx5_{BAD_HCA}: Port: 1 Link INIT",
                  f"{dmesg_T(t_event + timedelta(seconds=3))} mlx5_core {pci} mlx5_{BAD_HCA}: Port: 1 Link ACTIVE"]
            b.mark(f"probes/{h}/dmesg.txt", f"mlx5_{BAD_HCA}: Port: 1 Link DOWN")
        b.add(f"probes/{h}/dmesg.txt", d)
        ov = {BAD_HCA: {"Rate": 100}} if n == BAD else {}
        b.add(f"probes/{h}/ibstat.txt", ibstat(4, guid_base=0xb83fd20300aa1000 + n * 0x100, overrides=ov))
        ctr = []
        for k in range(4):
            if n == BAD and k == BAD_HCA:
                ctr += perfquery_x(f"mlx5_{k}", 40 + n * 4 + k, sym=38611, rec=1, downed=1)
            else:
                ctr += perfquery_x(f"mlx5_{k}", 40 + n * 4 + k)
        b.add(f"probes/{h}/ib-counters.txt", ctr)
    ib = f"probes/{HOSTS[BAD]}/ibstat.txt"
    b.mark(ib, "\t\tRate: 100")
    b.mark(f"probes/{HOSTS[BAD]}/ib-counters.txt", "SymbolErrorCounter:..............38611")

    job = f"""
job_id: "{JOB}"
name: tinyllama-1b-lightning-fsdp
framework: other
framework_detail: pytorch-lightning 2.4 (FSDPStrategy, RichProgressBar)
status: slow
started_at: {iso(t0)}
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
scheduler: slurm
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(i * 8 + k) for k in range(8))}]}}\n"
              for i, h in enumerate(HOSTS)) + """code:
  - {commit: e07b5a9, at: 2026-11-21T17:45:00Z, message: "lightning: fsdp full-shard, 4 HCAs per node"}
checkpoints:
  - {step: 12500, at: 2026-11-28T03:35:02Z, path: /lustre/lt/ckpt/tinyllama-1b/epoch=1-step=12500.ckpt, valid: true}
  - {step: 16000, at: 2026-11-28T06:01:47Z, path: /lustre/lt/ckpt/tinyllama-1b/epoch=2-step=16000.ckpt, valid: true}
spares: 1
history: ["40512", "40788"]
"""
    truth = {
        "fault": "slow_link",
        "category": "network",
        "root_cause": "InfiniBand port 1 of mlx5_2 on lt-gpu-07 retrained after a link drop and came back at a degraded "
                      "rate (ibstat Rate 100 vs 400 on every other port, 38k symbol errors): from global step 17021 the "
                      "FSDP collectives crossing it slow the whole job from ~1.95 to ~0.82 it/s",
        "faulty_nodes": [HOSTS[BAD]],
        "stage": "training",
        "iteration": 2 * PER_EPOCH + slow_from,
        "actions": [{"kind": "evict", "nodes": [HOSTS[BAD]]}, {"kind": "restart", "from_step": 16000}],
    }
    return b.write(job, truth)
