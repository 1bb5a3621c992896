"""JAX multi-host (jax.distributed, one process per host, absl logging) on 4 hosts x 8 H100, pure data parallel.
A leftover tokenization job of another user (180 worker processes) lands on jx-h100-a3 and saturates its CPUs:
that host's input pipeline falls behind (data_wait ~1.1 s per step) and, the step being synchronous, every host's
step time goes from ~0.91 s to ~1.98 s from step 5201. top/uptime on jx-h100-a3 show load ~188 on 192 CPUs.
"""
import random
from datetime import timedelta

from common import Bundle, T, iso, absl, dmesg_boot

ID = "jax-absl-cpu-overload-stray-proc-4node"
HOSTS = ["jx-h100-a1", "jx-h100-a2", "jx-h100-a3", "jx-h100-a4"]
IPS = ["10.88.0.21", "10.88.0.22", "10.88.0.23", "10.88.0.24"]
BAD = 2
SP = "/usr/local/lib/python3.11/site-packages"


def build(out_dir):
    random.seed(ID)
    b = Bundle(out_dir)
    t0 = T("2026-11-28T03:51:20")
    t_tr = T("2026-11-28T03:58:02")
    s_res, s_slow, s_last = 5000, 5201, 5480
    ok, slow = 0.912, 1.981

    def t_at(s):
        return t_tr + timedelta(seconds=(min(s, s_slow - 1) - s_res) * ok + max(0, s - s_slow + 1) * slow
                                + random.uniform(0, 0.05))

    for n, h in enumerate(HOSTS):
        tid = 140210000000000 + random.randint(10 ** 9, 9 * 10 ** 9)
        f = f"logs/{h}/train.log"
        A = lambda t, msg, lvl="I", src="train.py:301": f"{absl(t, lvl, tid, src)} {msg}"
        t = t0 + timedelta(seconds=2 + n * 0.1)
        L = []
        if n == 0:
            L.append(A(t, "Starting JAX distributed service on [::]:8476", src="distributed.py:149"))
        L += [A(t, f"Connecting to JAX distributed service on {IPS[0]}:8476", src="distributed.py:172"),
              A(t + timedelta(seconds=3), "Unable to initialize backend 'rocm': module 'jaxlib.xla_extension' has no attribute "
                                          "'GpuAllocatorConfig'", src="xla_bridge.py:895"),
              A(t + timedelta(seconds=3), "Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so: libtpu.so: "
                                          "cannot open shared object file: No such file or directory", src="xla_bridge.py:895"),
              A(t + timedelta(seconds=4), f"JAX process: {n} / 4", src="train.py:88"),
              A(t + timedelta(seconds=4), "JAX local devices: [" + ", ".join(f"CudaDevice(id={n * 8 + k})" for k in range(8)) + "]",
                src="train.py:89"),
              A(t + timedelta(seconds=4), "Mesh: Mesh('data': 32, 'model': 1)", src="train.py:104"),
              A(t + timedelta(seconds=5), f"Input pipeline: grain, 48 worker processes, per-host batch 64, seq_len 4096, "
                                          f"shards gs://lm-data/mix-v4/train-*.arrayrecord (host shard {n}/4)",
                src="input_pipeline.py:77"),
              A(t + timedelta(seconds=31), f"Restoring checkpoint from gs://lm-ckpt/gemma-2b-repro/{s_res}", src="train.py:152"),
              A(t_tr - timedelta(seconds=20), f"Restored step {s_res} in 48.2s", src="train.py:160"),
              f"{SP}/jax/_src/interpreters/mlir.py:1072: UserWarning: Some donated buffers were not usable: "
              f"ShapedArray(int32[]). See an explanation at https://jax.readthedocs.io/en/latest/faq.html#buffer-donation.",
              "  warnings.warn(\"Some donated buffers were not usable:\"",
              A(t_tr - timedelta(seconds=2), "Compiled train_step in 41.7s", src="train.py:214")]
        if n == 1:
            L.append(A(t_tr + timedelta(seconds=63), "Retrying read of gs://lm-data/mix-v4/train-00412-of-02048.arrayrecord "
                                                     "(attempt 2/5) after ConnectionResetError(104, 'Connection reset by peer')",
                       lvl="W", src="input_pipeline.py:141"))
        for s in range(s_res + 10, s_last + 1, 10):
            slow_now = s >= s_slow
            st = (slow if slow_now else ok) + random.uniform(-0.012, 0.012)
            dw = (1.072 + random.uniform(-0.05, 0.05)) if (slow_now and n == BAD) else random.uniform(0.011, 0.024)
            loss = 2.62 - (s - 5000) * 0.00009 + random.uniform(-0.02, 0.02)
            L.append(A(t_at(s), f"step {s} | loss {loss:.4f} | step_time {st:.3f}s | data_wait {dw:.3f}s | "
                                f"tokens/s/host {int(64 * 4096 / st):,}"))
        b.add(f, L)
    b.mark(f"logs/{HOSTS[BAD]}/train.log", f"step {((s_slow + 9) // 10) * 10} | loss")

    # probes
    t_p = t_at(s_last) + timedelta(seconds=40)
    up = "6 days,  3:11"
    for n, h in enumerate(HOSTS):
        if n == BAD:
            la = "188.42, 171.07, 96.33"
            procs = [(812044, "rkumar", "98.2g", "31.4g", "12204", "R", 17544.0, 1.6, "9012:44",
                      "python3 preprocess/tokenize_shards.py --num-proc 180 --input /scratch/rkumar/raw_cc --out /scratch/rkumar/tok"),
                     (455120, "mltrain", "812.1g", "102.3g", "3.1g", "S", 1322.4, 5.1, "4410:12",
                      "python3 -m trainer.train --config configs/gemma2b_repro.py --process_id=2"),
                     (455391, "mltrain", "9.8g", "2.1g", "301204", "S", 38.1, 0.1, "102:31", "python3 -m trainer.train --config configs/gemma2b_repro.py --process_id=2"),
                     (2211, "root", "0", "0", "0", "S", 0.7, 0.0, "3:10.41", "[ksoftirqd/118]")]
            cpu = "%Cpu(s): 97.9 us,  1.8 sy,  0.0 ni,  0.1 id,  0.0 wa,  0.0 hi,  0.2 si,  0.0 st "
            tasks = "Tasks: 1512 total, 183 running, 1329 sleeping,   0 stopped,   0 zombie"
        else:
            la = f"{random.uniform(24, 29):.2f}, {random.uniform(24, 29):.2f}, {random.uniform(24, 29):.2f}"
            procs = [(455100 + n * 7, "mltrain", "809.7g", "101.9g", "3.1g", "S", 2411.0 + random.uniform(-40, 40), 5.1, "4510:07",
                      f"python3 -m trainer.train --config configs/gemma2b_repro.py --process_id={n}"),
                     (455371 + n * 7, "mltrain", "9.8g", "2.1g", "301882", "S", 61.3, 0.1, "131:52",
                      f"python3 -m trainer.train --config configs/gemma2b_repro.py --process_id={n}"),
                     (1893, "root", "2381204", "61204", "31880", "S", 1.3, 0.0, "88:14.05", "/usr/bin/dcgm-exporter")]
            cpu = f"%Cpu(s): 12.{random.randint(1, 9)} us,  1.1 sy,  0.0 ni, 86.{random.randint(1, 7)} id,  0.0 wa,  0.0 hi,  0.1 si,  0.0 st "
            tasks = f"Tasks: {1280 + n} total,   2 running, {1278 + n} sleeping,   0 stopped,   0 zombie"
        top = [f"top - {t_p.strftime('%H:%M:%S')} up {up},  1 user,  load average: {la}", tasks, cpu,
               "MiB Mem : 2063584.0 total, 1102331.4 free, 411820.2 used, 549432.4 buff/cache     ",
               "MiB Swap:      0.0 total,      0.0 free,      0.0 used. 1644251.3 avail Mem ", "",
               "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"]
        for pid, user, virt, res, shr, st, c, mem, tm, cmd in procs:
            top.append(f"{pid:7d} {user:<9} 20   0 {virt:>7} {res:>6} {shr:>6} {st} {(f'{int(c):5d}' if c >= 1000 else f'{c:5.1f}')} {mem:5.1f} {tm:>9} {cmd}")
        b.add(f"probes/{h}/top.txt", top)
        b.add(f"probes/{h}/uptime.txt", [f" {t_p.strftime('%H:%M:%S')} up {up},  1 user,  load average: {la}"])
        b.add(f"probes/{h}/dmesg.txt", dmesg_boot(h, T("2026-11-22T00:47:09")))
    b.mark(f"probes/{HOSTS[BAD]}/top.txt", "load average: 188.42")
    b.mark(f"probes/{HOSTS[BAD]}/top.txt", "812044 rkumar")
    b.mark(f"probes/{HOSTS[BAD]}/uptime.txt", "load average: 188.42")

    job = f"""
job_id: "gemma2b-repro-77"
name: gemma-2b-repro-jax
framework: other
framework_detail: jax 0.4.35 multi-host (jax.distributed), grain input pipeline
status: slow
started_at: {iso(t0)}
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
processes_per_node: 1
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(i * 8 + k) for k in range(8))}]}}\n"
              for i, h in enumerate(HOSTS)) + """code:
  - {commit: 2b7d0e4, at: 2026-11-17T10:20:00Z, message: "gemma2b repro: grain 48 workers per host"}
checkpoints:
  - {step: 4000, at: 2026-11-27T22:48:31Z, path: gs://lm-ckpt/gemma-2b-repro/4000, valid: true}
  - {step: 5000, at: 2026-11-28T03:40:55Z, path: gs://lm-ckpt/gemma-2b-repro/5000, valid: true}
spares: 1
"""
    truth = {
        "fault": "cpu_overload",
        "category": "infrastructure",
        "root_cause": "a stray tokenization job of another user (PID 812044, 180 worker processes) saturates the CPUs of "
                      "jx-h100-a3 (load average 188 on 192 CPUs); that host's input pipeline falls behind (data_wait "
                      "~1.1 s) and every synchronous step slows from 0.91 s to 1.98 s from step 5201",
        "faulty_nodes": [HOSTS[BAD]],
        "stage": "training",
        "iteration": s_slow,
        "actions": [{"kind": "evict", "nodes": [HOSTS[BAD]]}, {"kind": "restart", "from_step": 5000}],
    }
    return b.write(job, truth)
