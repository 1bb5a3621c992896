"""Silent data corruption: a loss spike that a replay reproduces on one GPU of one node only; DCGM diag fails there.
HF accelerate `accelerate launch --multi_gpu` on two machines, one console log per node (+ a replay log)."""
import random
from common import Bundle, Ind, hms

IID = "accelerate-2machine-sdc-loss-spike-replay-dcgm"
HOSTS = ["acc-gpu-05", "acc-gpu-06"]
IPS = ["10.90.4.5", "10.90.4.6"]
BAD, BADGPU = 1, 3
SPIKE = 30417
T0 = 11 * 3600 + 2 * 60 + 9
STEP_S = 1.37
PY = "/opt/conda/lib/python3.11/site-packages"


def tr(lv, t, pid, src, msg):
    return f"{lv}1127 {hms(t)}.{int(round(t * 1e6)) % 1000000:06d} {pid} {src}] {msg}"


def build(root):
    b = Bundle(root, IID)
    rnd = random.Random(30417)
    tf = T0 + 80 + (SPIKE - 30000) * STEP_S
    for n, h in enumerate(HOSTS):
        apid = 7713 + 100 * n
        L = ["The following values were not passed to `accelerate launch` and had defaults used instead:",
             "\t`--dynamo_backend` was set to a value of `'no'`",
             "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`."]
        for m in ["", "*****************************************",
                  "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
                  "*****************************************"]:
            L.append(tr("W", T0 + 1, apid, "torch/distributed/run.py:793", m))
        for lr in range(8):
            L.append(f"{PY}/accelerate/accelerator.py:488: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead.")
            L.append("  self.scaler = torch.cuda.amp.GradScaler(**kwargs)")
        if n == 0:
            L += [f"11/27/2026 {hms(T0 + 31)} - INFO - __main__ - Distributed environment: MULTI_GPU  Backend: nccl",
                  "Num processes: 16", "Process index: 0", "Local process index: 0", "Device: cuda:0", "", "Mixed precision type: bf16", "",
                  f"11/27/2026 {hms(T0 + 58)} - INFO - accelerate.accelerator - Loading states from /mnt/ckpt/mt5-xl-sum/checkpoint_30000",
                  f"11/27/2026 {hms(T0 + 74)} - INFO - accelerate.checkpointing - All model weights loaded successfully",
                  f"11/27/2026 {hms(T0 + 74)} - INFO - accelerate.checkpointing - All optimizer states loaded successfully",
                  f"11/27/2026 {hms(T0 + 74)} - INFO - accelerate.checkpointing - All scheduler states loaded successfully",
                  f"11/27/2026 {hms(T0 + 74)} - INFO - accelerate.checkpointing - All dataloader sampler states loaded successfully",
                  f"11/27/2026 {hms(T0 + 74)} - INFO - accelerate.checkpointing - All random states loaded successfully",
                  f"11/27/2026 {hms(T0 + 75)} - INFO - accelerate.accelerator - Loading in 0 custom states"]
            ema = 1.94
            for s in range(30001, SPIKE):
                if s % 10 == 0:
                    loss = 1.94 - (s - 30000) * 2e-5 + rnd.uniform(-0.05, 0.05)
                    ema = 0.9 * ema + 0.1 * loss
                    L.append(f"11/27/2026 {hms(T0 + 80 + (s - 30000) * STEP_S)} - INFO - __main__ - step {s} | loss {loss:.4f} | grad_norm {rnd.uniform(0.33, 0.47):.3f} | lr 1.84e-04 | tok/s {rnd.randint(301000, 309000)}")
                if s == 30240:
                    L.append(f"11/27/2026 {hms(T0 + 80 + (s - 30000) * STEP_S)} - WARNING - urllib3.connectionpool - Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'RemoteDisconnected('Remote end closed connection without response')': /api/2.0/mlflow/runs/log-batch")
            losses = [f"{1.93 + rnd.uniform(-0.06, 0.06):.4f}" for _ in range(16)]
            losses[8 * BAD + BADGPU] = "95.2281"
            mean = sum(float(x) for x in losses) / 16
            L.append(f"11/27/2026 {hms(tf)} - INFO - __main__ - step {SPIKE} | loss {mean:.4f} | grad_norm 412.733 | lr 1.84e-04 | tok/s 304112")
            L.append(f"11/27/2026 {hms(tf)} - WARNING - __main__ - loss spike at step {SPIKE}: {mean:.4f} > 3.0 x EMA ({ema:.4f}); gathering per-rank losses")
            L.append(Ind(f"11/27/2026 {hms(tf)} - WARNING - __main__ - per-rank local loss at step {SPIKE}: [{', '.join(losses)}]"))
        for lr in range(8):
            r = 8 * n + lr
            L += [f"[rank{r}]: Traceback (most recent call last):",
                  f'[rank{r}]:   File "/workspace/mt5/train_sum.py", line 301, in <module>', f"[rank{r}]:     main()",
                  f'[rank{r}]:   File "/workspace/mt5/train_sum.py", line 262, in main', f"[rank{r}]:     guard.check(step, loss)",
                  f'[rank{r}]:   File "/workspace/mt5/spike_guard.py", line 58, in check', f"[rank{r}]:     raise RuntimeError(",
                  f"[rank{r}]: RuntimeError: loss spike at step {SPIKE} exceeds 3.0 x EMA of the loss: aborting so the step can be replayed from checkpoint_30000"]
        L.append(tr("E", tf + 3.1, apid, "torch/distributed/elastic/multiprocessing/api.py:869", f"failed (exitcode: 1) local_rank: 0 (pid: {apid + 12}) of binary: /opt/conda/bin/python3.11"))
        L += ["Traceback (most recent call last):", '  File "/opt/conda/bin/accelerate", line 8, in <module>', "    sys.exit(main())",
              f'  File "{PY}/accelerate/commands/accelerate_cli.py", line 48, in main', "    args.func(args)",
              f'  File "{PY}/accelerate/commands/launch.py", line 1159, in launch_command', "    multi_gpu_launcher(args)",
              f'  File "{PY}/accelerate/commands/launch.py", line 793, in multi_gpu_launcher', "    distrib_run.run(args)",
              f'  File "{PY}/torch/distributed/run.py", line 910, in run', "    elastic_launch(",
              f'  File "{PY}/torch/distributed/launcher/api.py", line 138, in __call__', "    return launch_agent(self._config, self._entrypoint, list(args))",
              f'  File "{PY}/torch/distributed/launcher/api.py", line 269, in launch_agent', "    raise ChildFailedError(",
              "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "=" * 60, "train_sum.py FAILED", "-" * 60,
              "Failures:", "  <NO_OTHER_FAILURES>", "-" * 60, "Root Cause (first observed failure):", "[0]:",
              f"  time      : 2026-11-27_{hms(tf + 3)}", f"  host      : {h}", f"  rank      : {8 * n} (local_rank: 0)",
              f"  exitcode  : 1 (pid: {apid + 12})", "  error_file: <N/A>",
              "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html", "=" * 60]
        b.write(f"logs/{h}/accelerate-launch.log", L)
        # replay of the spiking step: the same micro-batch on every rank, compared with a CPU fp32 reference
        tr0 = tf + 1900
        R = [f"11/27/2026 {hms(tr0)} - INFO - __main__ - replay: loaded checkpoint_30000, fast-forwarded data to step {SPIKE}, broadcasting micro-batch 0 of rank 11 to all ranks"]
        for lr in range(8):
            r = 8 * n + lr
            bad = n == BAD and lr == BADGPU
            diff = "3.1372e+01" if bad else f"{rnd.uniform(1.1, 4.9):.4e}".replace("e+00", "e-03")
            line = (f"11/27/2026 {hms(tr0 + 41)} - INFO - __main__ - replay rank {r} ({h} cuda:{lr}): loss {'95.2281' if bad else '1.9127'} "
                    f"max|logits-ref| {diff} {'MISMATCH' if bad else 'ok'}")
            R.append(Ind(line) if bad else line)
        if n == BAD:
            R.append(f"11/27/2026 {hms(tr0 + 95)} - INFO - __main__ - replay 2 (CUDA_VISIBLE_DEVICES rotated by 1 on every node): MISMATCH again on {h} cuda:{BADGPU} (now rank {8 * BAD + (BADGPU - 1) % 8}); all other ranks ok")
        b.write(f"logs/{h}/replay-step{SPIKE}.log", R)
        # probes
        ok_gpus = ", ".join(str(g) for g in range(8) if not (n == BAD and g == BADGPU))
        def row(a, c):
            return f"| {a:<25} | {c:<46} |"
        D = ["Successfully ran diagnostic for group.", "+---------------------------+------------------------------------------------+",
             row("Diagnostic", "Result"), "+===========================+================================================+",
             "|-----  Metadata  ----------+------------------------------------------------|",
             row("DCGM Version", "3.3.9"), row("Driver Version Detected", "550.127.08"),
             row("GPU Device IDs Detected", "2330,2330,2330,2330,2330,2330,2330,2330"),
             "|-----  Deployment  --------+------------------------------------------------|"]
        for k in ["Denylist", "NVML Library", "CUDA Main Library", "Permissions and OS Blocks", "Persistence Mode",
                  "Environment Variables", "Page Retirement/Row Remap", "Graphics Processes", "Inforom"]:
            D.append(row(k, "Pass"))
        D += ["+-----  Integration  -------+------------------------------------------------+", row("PCIe", "Pass - All"),
              "+-----  Hardware  ----------+------------------------------------------------+"]
        if n == BAD:
            D += [row("GPU Memory", f"Pass - GPUs: {ok_gpus}"), Ind(row("", f"Fail - GPU: {BADGPU}")),
                  Ind(row("Warning", f"GPU {BADGPU} A memory mismatch was detected on GPU {BADGPU},")),
                  row("", " but no error was reported by CUDA or NVML."), row("Diagnostic", f"Pass - GPUs: {ok_gpus}"),
                  row("", f"Fail - GPU: {BADGPU}")]
        else:
            D += [row("GPU Memory", "Pass - All"), row("Diagnostic", "Pass - All")]
        D += ["+-----  Stress  ------------+------------------------------------------------+",
              row("Targeted Stress", "Pass - All"), row("Targeted Power", "Pass - All"),
              row("Memory Bandwidth", "Pass - All"), row("EUD Test", "Skip - All"),
              "+---------------------------+------------------------------------------------+"]
        b.write(f"probes/{h}/dcgm-diag.txt", D)
        S = ["", "==============NVSMI LOG==============", "", "Driver Version                            : 550.127.08",
             "CUDA Version                              : 12.4", "", "Attached GPUs                             : 8"]
        for g, bus in enumerate(["19", "3B", "4C", "5D", "9B", "BB", "CB", "DB"]):
            S += [f"GPU 00000000:{bus}:00.0", "    Product Name                          : NVIDIA H100 80GB HBM3",
                  "    ECC Errors", "        Volatile", "            SRAM Correctable              : 0",
                  "            SRAM Uncorrectable Parity     : 0", "            SRAM Uncorrectable SEC-DED    : 0",
                  "            DRAM Correctable              : 0", "            DRAM Uncorrectable            : 0",
                  "    Remapped Rows", "        Correctable Error                 : 0", "        Uncorrectable Error               : 0",
                  "        Pending                           : No", "        Remapping Failure Occurred        : No", ""]
        b.write(f"probes/{h}/nvidia-smi.txt", S)
    b.job(f"""
job_id: "mt5-sum-1127a"
name: mt5-xl-summarization-ft
framework: other
launcher: "accelerate launch --multi_gpu --num_machines 2 --num_processes 16 --machine_rank $RANK --main_process_ip 10.90.4.5 --main_process_port 29500 --mixed_precision bf16 train_sum.py"
status: failed
started_at: 2026-11-27T{hms(T0)}Z
ended_at: 2026-11-27T{hms(tf + 4)}Z
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
nodes:
  - {{host: {HOSTS[0]}, ip: {IPS[0]}, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}}
  - {{host: {HOSTS[1]}, ip: {IPS[1]}, ranks: [8, 9, 10, 11, 12, 13, 14, 15]}}
code:
  - {{commit: 8e1f04c, at: 2026-11-14T10:00:00Z, message: "sum: label smoothing 0.1"}}
  - {{commit: 37ab9d2, at: 2026-11-23T15:12:00Z, message: "guard: abort on loss spike, dump per-rank losses"}}
checkpoints:
  - {{step: 29000, at: 2026-11-27T07:10:00Z, path: /mnt/ckpt/mt5-xl-sum/checkpoint_29000, valid: true}}
  - {{step: 30000, at: 2026-11-27T10:58:00Z, path: /mnt/ckpt/mt5-xl-sum/checkpoint_30000, valid: true}}
spares: 1
""")
    b.truth(fault="silent_data_corruption", category="hardware",
            root_cause="GPU 3 of acc-gpu-06 (rank 11) computes wrong results without any ECC or Xid error: its local loss at step 30417 was 95.2 against ~1.9 on every other rank, a replay of that micro-batch reproduced the mismatch only on acc-gpu-06 cuda:3 (also after rotating the rank mapping), and dcgmi diag -r 3 fails GPU 3 with a memory mismatch that CUDA and NVML did not report",
            faulty_nodes=[HOSTS[BAD]], stage="training", iteration=SPIKE,
            actions=[{"kind": "evict", "nodes": [HOSTS[BAD]]}, {"kind": "restart", "from_step": 30000}])
    return b
