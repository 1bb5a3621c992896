"""CUDA driver / runtime mismatch on one node (reimaged with an old driver branch).
NeMo 2 under sbatch: one slurm-%j.out for all 32 tasks, no rank prefixes, lines interleaved."""
import random
from common import Bundle, Ind, hms

IID = "sbatch-slurmout-nemo-old-driver-one-node-4node"
HOSTS = ["dgx-a14", "dgx-a15", "dgx-a16", "dgx-a17"]
IPS = ["10.50.8.14", "10.50.8.15", "10.50.8.16", "10.50.8.17"]
BAD = 3
JOB = "884213"
T0 = 7 * 3600 + 11 * 60 + 40
PY = "/usr/local/lib/python3.12/dist-packages"


def nemo(lv, t, src, msg):
    return f"[NeMo {lv} 2026-11-27 {hms(t)} {src}] {msg}"


def build(root):
    b = Bundle(root, IID)
    rnd = random.Random(884)
    L = [f"+ srun --kill-on-bad-exit=1 --container-image=/lustre/images/nemo-25.09.sqsh --container-mounts=/lustre:/lustre --no-container-mount-home python /lustre/code/llm/pretrain_llama3.py --resume-from /lustre/ckpt/l3-70b"]
    # per-task streams, then interleaved in small chunks as srun merges them
    streams = []
    for n, h in enumerate(HOSTS):
        for lr in range(8):
            r = 8 * n + lr
            s = [f"{PY}/megatron/core/tensor_parallel/layers.py:290: FutureWarning: `torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use `torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
                 "  def forward("]
            if n == BAD:
                s += ["Traceback (most recent call last):",
                      '  File "/lustre/code/llm/pretrain_llama3.py", line 41, in <module>',
                      "    torch.cuda.set_device(int(os.environ[\"SLURM_LOCALID\"]))",
                      f'  File "{PY}/torch/cuda/__init__.py", line 567, in set_device',
                      "    torch._C._cuda_setDevice(device)",
                      "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
                      "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                      "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                      "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", ""]
            else:
                if r == 0:
                    s += [nemo("I", T0 + 21, "nemo_logging:393", "Experiments will be logged at /lustre/results/l3-70b/default/2026-11-27_07-12-01"),
                          nemo("I", T0 + 22, "nemo_logging:393", "Resuming from /lustre/ckpt/l3-70b/step=40000-consumed_samples=40960000.0"),
                          "Using bfloat16 Automatic Mixed Precision (AMP)", "GPU available: True (cuda), used: True",
                          "TPU available: False, using: 0 TPU cores", "HPU available: False, using: 0 HPUs",
                          nemo("I", T0 + 23, "megatron_init:314", "Rank 0 has data parallel group : [0, 32]".replace(", 32]", "]")),
                          nemo("I", T0 + 23, "megatron_init:320", "Ranks 0 has data parallel rank: 0"),
                          nemo("I", T0 + 23, "megatron_init:335", "Rank 0 has tensor model parallel group: [0, 1, 2, 3, 4, 5, 6, 7]"),
                          nemo("I", T0 + 23, "megatron_init:367", "Rank 0 has pipeline model parallel group: [0, 8, 16, 24]")]
                s.append(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/32")
                if r == 5:
                    s.append("WARNING:urllib3.connectionpool:Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ReadTimeoutError(\"HTTPSConnectionPool(host='wandb.corp.local', port=443): Read timed out. (read timeout=20)\")': /graphql")
            streams.append(s)
    idx = [0] * len(streams)
    first_err = True
    while any(idx[i] < len(streams[i]) for i in range(len(streams))):
        i = rnd.randrange(len(streams))
        if idx[i] >= len(streams[i]):
            continue
        k = rnd.choice([1, 2, 3])
        for line in streams[i][idx[i]:idx[i] + k]:
            if first_err and line.startswith("RuntimeError: CUDA error"):
                line = Ind(line)
                first_err = False
            L.append(line)
        idx[i] += k
    L += [Ind(f"srun: error: {HOSTS[BAD]}: tasks 24-31: Exited with exit code 1"),
          "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
          f"slurmstepd: error: *** STEP {JOB}.0 ON {HOSTS[0]} CANCELLED AT 2026-11-27T{hms(T0 + 58)} ***",
          f"srun: error: {HOSTS[1]}: tasks 8-15: Killed", f"srun: error: {HOSTS[2]}: tasks 16-23: Killed",
          f"srun: error: {HOSTS[0]}: tasks 0-7: Killed"]
    b.write(f"logs/{HOSTS[0]}/slurm-{JOB}.out", L)
    for n, h in enumerate(HOSTS):
        bad = n == BAD
        drv, cuda = ("450.248.02", "11.0") if bad else ("550.127.08", "12.4")
        s = ["", "==============NVSMI LOG==============", "", f"Timestamp                                 : Fri Nov 27 07:31:0{n} 2026"]
        dl = f"Driver Version                            : {drv}"
        s += [Ind(dl) if bad else dl, f"CUDA Version                              : {cuda}", "", "Attached GPUs                             : 8"]
        for gi, bus in enumerate(["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"]):
            s += [f"GPU 00000000:{bus}:00.0", "    Product Name                          : NVIDIA H100 80GB HBM3",
                  "    Product Brand                         : NVIDIA", "    Product Architecture                  : Hopper",
                  "    Persistence Mode                      : Enabled", f"    Minor Number                          : {gi}",
                  "    VBIOS Version                         : 96.00.99.00.01",
                  "    GPU Reset Status", "        Reset Required                    : No", "        Drain and Reset Recommended       : No", ""]
        b.write(f"probes/{h}/nvidia-smi.txt", s)
        b.write(f"probes/{h}/modinfo-nvidia.txt", [f"filename:       /lib/modules/5.15.0-{'91' if bad else '122'}-generic/updates/dkms/nvidia.ko",
                                                   "alias:          char-major-195-*", f"version:        {drv}", "supported:      external",
                                                   "license:        NVIDIA", "firmware:       nvidia/" + drv + "/gsp_tu10x.bin"])
    b.job(f"""
job_id: "{JOB}"
name: llama3-70b-nemo-pretrain
framework: nemo
scheduler: slurm
status: failed
started_at: 2026-11-27T{hms(T0)}Z
ended_at: 2026-11-27T{hms(T0 + 59)}Z
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 8, pp: 4, dp: 1, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(8 * i + k) for k in range(8))}]}}\n" for i, h in enumerate(HOSTS)) + """code:
  - {commit: e3b8a10, at: 2026-11-10T08:00:00Z, message: "recipe: llama3 70b, global batch 1024"}
  - {commit: 71fd2c4, at: 2026-11-19T17:30:00Z, message: "data: dedup v3 shards"}
image: /lustre/images/nemo-25.09.sqsh (CUDA 12.9 runtime)
checkpoints:
  - {step: 39500, at: 2026-11-26T18:02:00Z, path: "/lustre/ckpt/l3-70b/step=39500-consumed_samples=40448000.0", valid: true}
  - {step: 40000, at: 2026-11-26T23:41:00Z, path: "/lustre/ckpt/l3-70b/step=40000-consumed_samples=40960000.0", valid: true}
  - {step: 40500, at: 2026-11-27T05:20:00Z, path: "/lustre/ckpt/l3-70b/step=40500-consumed_samples=41472000.0", valid: false}
spares: 2
history: [884101]
note: "dgx-a17 came back from a reimage on 2026-11-27 and joined the partition for this job"
""")
    b.truth(fault="cuda_driver_mismatch", category="infrastructure",
            root_cause="dgx-a17 came back from its reimage with NVIDIA driver 450.248.02 (CUDA 11.0), too old for the container's CUDA 12 runtime, so all 8 tasks on it failed in torch.cuda.set_device with 'CUDA driver version is insufficient for CUDA runtime version' and srun killed the step",
            faulty_nodes=[HOSTS[BAD]], stage="init", iteration=None,
            actions=[{"kind": "evict", "nodes": [HOSTS[BAD]]}, {"kind": "restart", "from_step": 40000}])
    return b
