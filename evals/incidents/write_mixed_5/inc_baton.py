"""JIT extension build lock left by a killed build: every rank waits in FileBaton.wait() forever.
DeepSpeed launcher with --enable_each_rank_log (per-rank <timestamp>_rank<N>.log files) + py-spy dumps."""
from common import Bundle, Ind, hms

IID = "deepspeed-rankdir-fusedadam-stale-lock-hang-2node"
HOSTS = ["a800-n01", "a800-n02"]
IPS = ["172.16.30.1", "172.16.30.2"]
T0 = 9 * 3600 + 15 * 60 + 2
PREFIX = "20261127091502"
EXT = "/home/mlops/.cache/torch_extensions/py310_cu124"
PY = "/usr/local/lib/python3.10/dist-packages"
CMD = "['/usr/bin/python3', '-u', 'pretrain.py', '--local_rank={lr}', '--deepspeed', '--deepspeed_config', 'ds_z2.json', '--model', 'qwen2.5-14b']"


def ds(t, lvl, src, msg):
    return f"[2026-11-27 {hms(t)},{int(t * 1000) % 1000:03d}] [{lvl}] [{src}] {msg}"


def build(root):
    b = Bundle(root, IID)
    wmap = "{'a800-n01': [0, 1, 2, 3, 4, 5, 6, 7], 'a800-n02': [0, 1, 2, 3, 4, 5, 6, 7]}"
    gmap = "defaultdict(<class 'list'>, {'a800-n01': [0, 1, 2, 3, 4, 5, 6, 7], 'a800-n02': [8, 9, 10, 11, 12, 13, 14, 15]})"
    for n, h in enumerate(HOSTS):
        t = T0 + 1.2 + 0.4 * n
        pre = f"{h}: "
        L = [pre + ds(t, "INFO", "real_accelerator.py:219:get_accelerator", "Setting ds_accelerator to cuda (auto detect)"),
             pre + ds(t + 1.9, "INFO", "launch.py:146:main", f"WORLD INFO DICT: {wmap}"),
             pre + ds(t + 1.9, "INFO", "launch.py:152:main", f"nnodes=2, num_local_procs=8, node_rank={n}"),
             pre + ds(t + 1.9, "INFO", "launch.py:163:main", f"global_rank_mapping={gmap}"),
             pre + ds(t + 1.9, "INFO", "launch.py:164:main", "dist_world_size=16"),
             pre + ds(t + 1.9, "INFO", "launch.py:168:main", "Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7")]
        for lr in range(8):
            L.append(pre + ds(t + 1.95 + 0.003 * lr, "INFO", "launch.py:256:main", f"process {30211 + 40 * n + lr} spawned with command: {CMD.format(lr=lr)}"))
        b.write(f"logs/{h}/launcher.log", L)
        for lr in range(8):
            r = 8 * n + lr
            tt = t + 6.1 + 0.05 * lr
            R = [ds(tt, "INFO", "real_accelerator.py:219:get_accelerator", "Setting ds_accelerator to cuda (auto detect)"),
                 " [WARNING]  async_io requires the dev libaio .so object and headers but these were not found.",
                 " [WARNING]  async_io: please install the libaio-dev package with apt",
                 " [WARNING]  If libaio is already installed (perhaps from source), try setting the CFLAGS and LDFLAGS environment variables to where it can be found.",
                 " [WARNING]  Please specify the CUTLASS repo directory as environment variable $CUTLASS_PATH",
                 f"{PY}/transformers/utils/hub.py:128: FutureWarning: Using `TRANSFORMERS_CACHE` is deprecated and will be removed in v5 of Transformers. Use `HF_HOME` instead.",
                 "  warnings.warn(",
                 ds(tt + 3.2, "INFO", "comm.py:652:init_distributed", "cdb=None")]
            if r == 0:
                R.append(ds(tt + 3.2, "INFO", "comm.py:683:init_distributed", "Initializing TorchBackend in DeepSpeed with backend nccl"))
            R.append(ds(tt + 41.0, "INFO", "partition_parameters.py:348:__exit__", "finished initializing model - num_params = 579, num_elems = 14.77B") if r == 0 else
                     ds(tt + 41.0, "WARNING", "config_utils.py:70:_process_deprecated_field", "Config parameter cpu_offload is deprecated use offload_optimizer instead"))
            if r == 0:
                R += [ds(tt + 44.3, "INFO", "logging.py:128:log_dist", "[Rank 0] DeepSpeed info: version=0.16.2, git-hash=unknown, git-branch=unknown"),
                      ds(tt + 44.3, "INFO", "config.py:733:__init__", "Config mesh_device None world_size = 16"),
                      ds(tt + 45.1, "INFO", "logging.py:128:log_dist", "[Rank 0] DeepSpeed Flops Profiler Enabled: False")]
            last = f"Using {EXT} as PyTorch extensions root..."
            R.append(Ind(last) if r == 0 else last)
            b.write(f"logs/{h}/{PREFIX}_rank{r}.log", R)
        for lr in (0, 7):
            r = 8 * n + lr
            pid = 30211 + 40 * n + lr
            S = []
            for k in range(2):
                S += [f"Process {pid}: /usr/bin/python3 -u pretrain.py --local_rank={lr} --deepspeed --deepspeed_config ds_z2.json --model qwen2.5-14b",
                      "Python v3.10.12 (/usr/bin/python3.10)", "", f'Thread {pid} (idle): "MainThread"']
                w = "    wait (torch/utils/file_baton.py:43)"
                S.append(Ind(w) if (r == 0 and k == 0) else w)
                S += ["    _jit_compile (torch/utils/cpp_extension.py:1741)", "    load (torch/utils/cpp_extension.py:1312)",
                      "    jit_load (deepspeed/ops/op_builder/builder.py:535)", "    load (deepspeed/ops/op_builder/builder.py:480)",
                      "    __init__ (deepspeed/ops/adam/fused_adam.py:94)", "    _configure_basic_optimizer (deepspeed/runtime/engine.py:1318)",
                      "    _configure_optimizer (deepspeed/runtime/engine.py:1228)", "    __init__ (deepspeed/runtime/engine.py:304)",
                      "    initialize (deepspeed/__init__.py:193)", "    main (pretrain.py:142)", "    <module> (pretrain.py:201)",
                      f'Thread {pid + 97} (idle): "Thread-1"', "    wait (threading.py:324)", "    wait (threading.py:607)",
                      "    run (tqdm/_monitor.py:60)", "    _bootstrap_inner (threading.py:1016)", "    _bootstrap (threading.py:973)", ""]
            b.write(f"stacks/{h}/rank-{r}.txt", S)
    # probes (home is NFS: the same cache dir is seen from both nodes)
    b.write(f"probes/{HOSTS[0]}/ls-torch-extensions.txt", [
        f"$ ls -la --time-style=full-iso {EXT}/fused_adam/",
        "total 12",
        "drwxr-xr-x 2 mlops mlops 4096 2026-11-26 23:41:07.402113327 +0000 .",
        "drwxr-xr-x 5 mlops mlops 4096 2026-11-26 23:41:05.118027455 +0000 ..",
        "-rw-r--r-- 1 mlops mlops 1873 2026-11-26 23:41:07.402113327 +0000 build.ninja",
        Ind("-rw-r--r-- 1 mlops mlops    0 2026-11-26 23:41:06.980164201 +0000 lock"),
        f"$ df -hT /home/mlops", "Filesystem                  Type  Size  Used Avail Use% Mounted on",
        "nas01.corp.local:/export/home nfs4   40T   29T   11T  73% /home"])
    b.write(f"probes/{HOSTS[0]}/sacct.txt", [
        "$ sacct -u mlops -S 2026-11-26T22:00 -o JobID,JobName,NodeList,State,Start,End,ExitCode",
        "JobID           JobName        NodeList      State               Start                 End ExitCode ",
        "------------ ---------- --------------- ---------- ------------------- ------------------- -------- ",
        "5120         qwen14b-pt a800-n[01-02]   CANCELLED+ 2026-11-26T23:38:51 2026-11-26T23:41:09      0:0 ",
        "5120.batch        batch        a800-n01  CANCELLED 2026-11-26T23:38:51 2026-11-26T23:41:10     0:15 ",
        "5131         qwen14b-pt a800-n[01-02]      RUNNING 2026-11-27T09:14:58             Unknown      0:0 "])
    b.write(f"probes/{HOSTS[0]}/nvidia-smi-dmon.txt", [
        "# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk ",
        "# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz "] +
        [f"    {g}     {61 + g % 3}     {33 + g % 4}      -      0      0      0      0      0      0   1593    210 " for g in range(8)])
    b.job(f"""
job_id: "5131"
name: qwen2.5-14b-continued-pt
framework: deepspeed
scheduler: slurm
launcher: "deepspeed --hostfile hostfile --enable_each_rank_log=/lustre/logs/5131 pretrain.py --deepspeed --deepspeed_config ds_z2.json"
status: hung
started_at: 2026-11-27T{hms(T0 - 4)}Z
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
nodes:
  - {{host: {HOSTS[0]}, ip: {IPS[0]}, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}}
  - {{host: {HOSTS[1]}, ip: {IPS[1]}, ranks: [8, 9, 10, 11, 12, 13, 14, 15]}}
code:
  - {{commit: 6b2e0f9, at: 2026-11-20T13:00:00Z, message: "pt: qwen2.5 tokenizer, 32k ctx"}}
  - {{commit: c83a71e, at: 2026-11-26T22:47:00Z, message: "optim: FusedAdam instead of torch AdamW"}}
checkpoints:
  - {{step: 6000, at: 2026-11-26T20:30:00Z, path: /lustre/ckpt/qwen14b-pt/global_step6000, valid: true}}
spares: 0
history: [5098]
hang_observed_at: 2026-11-27T10:02:00Z
""")
    b.truth(fault="extension_build_lock", category="infrastructure",
            root_cause="job 5120 was cancelled at 23:41 while it was JIT-building DeepSpeed's fused_adam extension and left the empty 'lock' file in the shared (NFS) torch_extensions directory; every rank of job 5131 on both nodes now waits forever in torch.utils.file_baton.FileBaton.wait() for that lock to disappear",
            faulty_nodes=[], stage="init", iteration=None,
            actions=[{"kind": "none"}])
    return b
