"""Colossal-AI (launch_from_slurm, LowLevelZero stage 2) under `srun -l --output=%N-%j.out`, 4 nodes x 8 H100, 32 tasks.
hpc-g103 crashes (no kernel message survives): its output file ends in the middle of a line, a few healthy ranks get
IB retry-exceeded completions from it, and Slurm reports the node failure (NODE_FAIL, node DOWN+NOT_RESPONDING).
"""
import random
from datetime import timedelta

from common import Bundle, T, iso, dmesg_boot, nccl, remote_error_tb

ID = "srun-label-colossalai-node-crash-4node"
JOB = "771902"
HOSTS = ["hpc-g101", "hpc-g102", "hpc-g103", "hpc-g104"]
IPS = ["172.20.1.101", "172.20.1.102", "172.20.1.103", "172.20.1.104"]
BAD = 2
SP = "/opt/conda/lib/python3.10/site-packages"


def lab(task, s):
    return f"{task:2d}: {s}"


def bar(step, total, t_el, rate, loss):
    pct = int(100 * step / total)
    fill = int(10 * step / total)
    frac = (10 * step / total) - fill
    part = " ▏▎▍▌▋▊▉"[int(frac * 8)] if fill < 10 else ""
    b = ("█" * fill + part).ljust(10)
    el = str(timedelta(seconds=int(t_el)))
    rem = str(timedelta(seconds=int((total - step) * rate)))
    return f"Epoch 0:  {pct:2d}%|{b}| {step}/{total} [{el}<{rem}, {rate:5.2f}s/it, loss={loss:.4f}]"


def build(out_dir):
    random.seed(ID)
    b = Bundle(out_dir)
    t0 = T("2026-11-28T07:08:31")
    t_tr = T("2026-11-28T07:14:10")
    s0, last_done = 1001, 1750
    rate = 2.5
    total = 4000
    t_crash = t_tr + timedelta(seconds=(last_done - s0 + 1) * rate + 0.6)
    files = {h: f"logs/{h}/{h}-{JOB}.out" for h in HOSTS}
    L = {h: [] for h in HOSTS}
    m = L[HOSTS[0]]
    m += [lab(0, f"[11/28/26 07:09:02] INFO     colossalai - colossalai - INFO: {SP}/colossalai/initialize.py:75 launch"),
          lab(0, "                    INFO     colossalai - colossalai - INFO: Distributed environment is initialized, world size: 32")]
    for n, h in enumerate(HOSTS):
        for k in range(8):
            task = n * 8 + k
            L[h].append(lab(task, f"{SP}/colossalai/shardformer/layer/normalization.py:45: UserWarning: Please install apex "
                                  f"from source (https://github.com/NVIDIA/apex) to use the fused layernorm kernel"))
            L[h].append(lab(task, "  warnings.warn("))
    m += [lab(0, "Model params: 6.74 B"),
          lab(0, "Booster init max device memory: 27181.47 MB"),
          lab(0, "Booster init max CPU memory: 31442.63 MB"),
          lab(0, "Loading checkpoint from /gpfs/ckpt/cai-llama2-7b/epoch-0_step-1000"),
          lab(0, "Loaded checkpoint /gpfs/ckpt/cai-llama2-7b/epoch-0_step-1000 at epoch 0 step 1000"),
          lab(0, "Optimizer and scheduler states loaded; sampler start index set to 128000")]
    chunk = []
    t_el0 = 1000 * rate
    for s in range(s0, last_done + 1):
        ts = t_tr + timedelta(seconds=(s - s0 + 1) * rate)
        loss = 2.41 - (s - 1000) * 0.0002 + random.uniform(-0.04, 0.04)
        if s % 5 == 0:
            chunk.append(bar(s, total, t_el0 + (s - s0 + 1) * rate, rate + random.uniform(-0.02, 0.02), loss))
        if s == 1500:
            m.append(lab(0, "\r".join([""] + chunk) + "Start saving model checkpoint with running states"))
            chunk = []
            m.append(lab(0, "Saved checkpoint at epoch 0 step 1500 at folder /gpfs/ckpt/cai-llama2-7b"))
        if s % 50 == 0:
            for n, h in enumerate(HOSTS):
                for k in range(8):
                    task = n * 8 + k
                    msg = (f"[rank {task}] step {s} loss {loss + random.uniform(-0.05, 0.05):.4f} lr "
                           f"{3e-4 * (1 - s / 8000):.3e} tok/s/gpu {random.randint(3180, 3260)} mem {58.1 + random.uniform(0, 0.4):.1f}GB")
                    if task == 0:
                        L[h].append(lab(0, "\r".join([""] + chunk) + msg))
                        chunk = []
                    elif n == BAD and s == last_done and k >= 5:
                        if k == 5:
                            b.cut(files[h], lab(task, msg[:31]))
                        continue
                    else:
                        L[h].append(lab(task, msg))
    b.mark(files[HOSTS[BAD]], lab(BAD * 8 + 5, "[rank 21] step 1750 loss"))
    # healthy ranks next to hpc-g103 in the rings get retry-exceeded completions ~2 min later
    t_err = t_crash + timedelta(seconds=127)
    for task, n in ((15, 1), (24, 3)):
        h = HOSTS[n]
        pid = 88100 + task
        comp = (f"NET/IB : Got completion from peer {IPS[BAD]}<{random.randint(40000, 60000)}> with status=12 opcode=0 "
                f"len=0 vendor err 129 ({'Send' if task == 15 else 'Recv'}) localGid ::ffff:{IPS[n]} remoteGids::ffff:{IPS[BAD]}")
        L[h].append(lab(task, nccl(h, pid, pid + 212, task % 8, "WARN " + comp)))
        L[h].append(lab(task, nccl(h, pid, pid + 212, task % 8, "INFO transport/net.cc:1302 -> 6")))
        frames = [("/workspace/Colossal-LLaMA/train.py", 471, "main()", "<module>"),
                  ("/workspace/Colossal-LLaMA/train.py", 376, "booster.backward(loss=loss, optimizer=optimizer)", "main"),
                  (f"{SP}/colossalai/booster/booster.py", 167, "optimizer.backward(loss)", "backward"),
                  (f"{SP}/colossalai/zero/low_level/low_level_optim.py", 470, "self._run_reduction()", "backward"),
                  (f"{SP}/torch/distributed/distributed_c10d.py", 4013, "work = group._reduce_scatter_base(output, input, opts)",
                   "reduce_scatter_tensor")]
        L[h] += [lab(task, x) for x in remote_error_tb(task, "/workspace/Colossal-LLaMA/train.py", frames, comp)]
    for h in HOSTS:
        b.add(files[h], L[h])
    t_fail = t_crash + timedelta(seconds=305)
    b.add(f"logs/{HOSTS[0]}/slurm-{JOB}.out", [
        "+ export MASTER_ADDR=hpc-g101 MASTER_PORT=29511",
        f"+ srun -l --output=/gpfs/logs/cai-llama2-7b/%N-%j.out --kill-on-bad-exit=1 python /workspace/Colossal-LLaMA/train.py "
        "--config /workspace/configs/llama2_7b_zero2.json --load_checkpoint /gpfs/ckpt/cai-llama2-7b/epoch-0_step-1000",
        f"srun: error: {HOSTS[1]}: task 15: Exited with exit code 1",
        "srun: Terminating StepId=" + JOB + ".0",
        f"srun: error: {HOSTS[3]}: task 24: Exited with exit code 1",
        f"srun: error: Node failure on {HOSTS[BAD]}",
        "srun: Job step aborted: Waiting up to 62 seconds for job step to finish.",
        f"slurmstepd: error: *** STEP {JOB}.0 ON {HOSTS[0]} CANCELLED AT {t_fail.strftime('%Y-%m-%dT%H:%M:%S')} DUE TO NODE "
        f"FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
        f"srun: error: {HOSTS[0]}: tasks 0-7: Killed",
        f"srun: error: {HOSTS[1]}: tasks 8-14: Killed",
        f"srun: error: {HOSTS[3]}: tasks 25-31: Killed"])
    b.mark(f"logs/{HOSTS[0]}/slurm-{JOB}.out", f"srun: error: Node failure on {HOSTS[BAD]}")

    # probes
    bad = HOSTS[BAD]
    sc = f"probes/{bad}/scontrol-show-node.txt"
    b.add(sc, [f"NodeName={bad} Arch=x86_64 CoresPerSocket=48 ",
               "   CPUAlloc=0 CPUEfctv=192 CPUTot=192 CPULoad=N/A",
               "   AvailableFeatures=h100,ib,nvme",
               "   ActiveFeatures=h100,ib,nvme",
               "   Gres=gpu:h100:8(S:0-1)",
               f"   NodeAddr={bad} NodeHostName={bad} Version=23.11.10",
               "   RealMemory=2015000 AllocMem=0 FreeMem=N/A Sockets=2 Boards=1",
               "   State=DOWN+NOT_RESPONDING ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A",
               "   Partitions=gpu ",
               "   BootTime=2026-11-14T03:11:40 SlurmdStartTime=2026-11-14T03:13:02",
               f"   LastBusyTime={t_crash.strftime('%Y-%m-%dT%H:%M:%S')} ResumeAfterTime=None",
               "   CfgTRES=cpu=192,mem=2015000M,billing=192,gres/gpu=8",
               "   AllocTRES=",
               "   CapWatts=n/a",
               "   CurrentWatts=0 AveWatts=0",
               "   ExtSensorsJoules=n/a ExtSensorsWatts=0 ExtSensorsTemp=n/a",
               f"   Reason=Not responding [slurm@{(t_crash + timedelta(seconds=301)).strftime('%Y-%m-%dT%H:%M:%S')}]", ""])
    b.mark(sc, "State=DOWN+NOT_RESPONDING")
    b.mark(sc, "Reason=Not responding")
    b.add(f"probes/{bad}/ssh.json", ['{"probe": "ssh", "status": "fail", "detail": "ssh: connect to host hpc-g103 port 22: '
                                      'No route to host", "metrics": {"attempts": 3}}'])
    b.add(f"probes/{HOSTS[0]}/sacct.txt", [
        "JobID           JobName      State ExitCode        NodeList ",
        "------------ ---------- ---------- -------- --------------- ",
        f"{JOB}       cai-llama2  NODE_FAIL      1:0  hpc-g[101-104] ",
        f"{JOB}.batch      batch  CANCELLED     0:15        hpc-g101 ",
        f"{JOB}.0         python  NODE_FAIL      1:0  hpc-g[101-104] "])
    for n, h in enumerate(HOSTS):
        if n != BAD:
            b.add(f"probes/{h}/dmesg.txt", dmesg_boot(h, T("2026-11-14T03:10:55")))

    t_end = t_fail + timedelta(seconds=62)
    job = f"""
job_id: "{JOB}"
name: cai-llama2-7b-zero2
framework: other
framework_detail: colossalai
status: failed
started_at: {iso(t0)}
ended_at: {iso(t_end)}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
scheduler: slurm
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(i * 8 + k) for k in range(8))}]}}\n"
              for i, h in enumerate(HOSTS)) + """code:
  - {commit: c51e0b7, at: 2026-11-12T14:10:00Z, message: "Colossal-LLaMA: continual pretrain 7b, zero2"}
checkpoints:
  - {step: 500, at: 2026-11-27T21:02:11Z, path: /gpfs/ckpt/cai-llama2-7b/epoch-0_step-500, valid: true}
  - {step: 1000, at: 2026-11-27T23:58:40Z, path: /gpfs/ckpt/cai-llama2-7b/epoch-0_step-1000, valid: true}
  - {step: 1500, at: 2026-11-28T07:35:06Z, path: /gpfs/ckpt/cai-llama2-7b/epoch-0_step-1500, valid: false}
spares: 2
"""
    truth = {
        "fault": "node_crash",
        "category": "hardware",
        "root_cause": "node hpc-g103 (tasks 16-23) went down mid-step (its output stops mid-line, Slurm marks it "
                      "DOWN+NOT_RESPONDING and the job NODE_FAIL); healthy ranks saw IB retry-exceeded completions from it",
        "faulty_nodes": [bad],
        "stage": "training",
        "iteration": last_done + 1,
        "actions": [{"kind": "evict", "nodes": [bad]}, {"kind": "restart", "from_step": 1000}],
    }
    return b.write(job, truth)
