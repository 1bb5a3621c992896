"""A GPU that is not visible on one node (RmInitAdapter failed; nvidia-smi lists 7 of 8).
JAX multi-host with jax.distributed (one process per node), absl/XLA C++ log lines (I1127/E1127/F1127)."""
from common import Bundle, Ind, hms

IID = "jax-distributed-7of8-gpus-xla-heartbeat-4node"
HOSTS = ["jx-h100-01", "jx-h100-02", "jx-h100-03", "jx-h100-04"]
IPS = ["10.72.0.11", "10.72.0.12", "10.72.0.13", "10.72.0.14"]
BAD, BADBUS = 2, "ba"
T0 = 4 * 3600 + 11 * 60 + 50
PY = "/opt/venv/lib/python3.11/site-packages"
BUSES = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]


def a(lv, t, tid, src, msg):
    return f"{lv}1127 {hms(t)}.{int(round(t * 1e6)) % 1000000:06d} {tid:>7} {src}] {msg}"


def build(root):
    b = Bundle(root, IID)
    for n, h in enumerate(HOSTS):
        t = T0 + 0.7 * n
        ptid = 140028112611136 + n
        ctid = 52211 + 40 * n
        L = [f"+ python3 -u -m lmtrain.train --config=configs/gemma2_9b.py --config.ckpt_dir=gs://lm-ckpt/g9b-pt --jax_coordinator={IPS[0]}:1234 --process_id={n} --num_processes=4"]
        if n == 0:
            L.append(a("I", t + 2.1, ptid, "distributed.py:130", "Starting JAX distributed service on [::]:1234"))
            L.append(a("I", t + 2.1, ctid, "coordination_service.cc:637", "Initializing CoordinationService"))
        L.append(a("I", t + 2.2, ptid, "distributed.py:149", f"Connecting to JAX distributed service on {IPS[0]}:1234"))
        L.append(a("I", t + 2.9, ctid + 1, "client.cc:132", "Connected to distributed JAX controller"))
        if n == 0:
            for k in range(4):
                L.append(a("I", t + 2.4 + 0.5 * k, ctid + 2, "coordination_service.cc:551",
                           f"/job:jax_worker/replica:0/task:{k} has connected to coordination service. Incarnation: {9502647996696210448 + 7919 * k}"))
        nloc = 7 if n == BAD else 8
        first = 8 * n
        L.append(a("I", t + 6.0, ptid, "xla_bridge.py:906", "Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so: libtpu.so: cannot open shared object file: No such file or directory"))
        line = a("I", t + 6.3, ptid, "train.py:77", f"process_index={n} process_count=4 local_device_count={nloc} device_count=31")
        L.append(Ind(line) if n == BAD else line)
        ids = list(range(first, first + nloc)) if n < BAD else (list(range(16, 23)) if n == BAD else list(range(23, 31)))
        L.append(a("I", t + 6.3, ptid, "train.py:78", "local devices: [" + ", ".join(f"CudaDevice(id={i})" for i in ids) + "]"))
        if n == BAD:
            L += ["Traceback (most recent call last):",
                  '  File "<frozen runpy>", line 198, in _run_module_as_main', '  File "<frozen runpy>", line 88, in _run_code',
                  '  File "/app/lmtrain/train.py", line 212, in <module>', "    app.run(main)",
                  f'  File "{PY}/absl/app.py", line 308, in run', "    _run_main(main, args)",
                  f'  File "{PY}/absl/app.py", line 254, in _run_main', "    sys.exit(main(argv))",
                  '  File "/app/lmtrain/train.py", line 84, in main',
                  "    assert jax.local_device_count() == cfg.mesh.ici_shape[-1], (",
                  Ind(f"AssertionError: host {h} sees 7 local GPUs but the ICI mesh (1, 8) needs 8")]
        else:
            L.append(a("I", t + 6.5, ptid, "train.py:91", "waiting for all hosts at sync_global_devices('mesh_setup')"))
            te = T0 + 6.3 + 0.7 * BAD + 100.2 + 0.01 * n
            if n == 0:
                L.append(a("E", te - 0.05, ctid + 2, "coordination_service.cc:1140",
                           "/job:jax_worker/replica:0/task:2 has been set to ERROR in coordination service: UNAVAILABLE: Task /job:jax_worker/replica:0/task:2 heartbeat timeout. This indicates that the remote task has failed, got preempted, or crashed unexpectedly. Check the task logs for an earlier error to see why the task failed. [type.googleapis.com/tensorflow.CoordinationServiceError='']"))
            L.append(a("E", te, ctid + 3, "coordination_service_agent.cc:332", "Polled an error from coordination service (this can be an error from this or another task)."))
            L += [a("F", te, ctid + 3, "client.cc:62", "Terminating process because the JAX distributed service detected fatal errors. This most likely indicates that another task died; see the other task logs for more details. Disable Python buffering, i.e. `python -u`, to be sure to see all the previous output. absl::Status: UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):"),
                  "/job:jax_worker/replica:0/task:2",
                  "The tasks have crashed. Check the task logs for an earlier error to debug further. [type.googleapis.com/tensorflow.CoordinationServiceError='']",
                  "*** Check failure stack trace: ***", "    @     0x7f5d1b0c8e04  absl::lts_20230802::log_internal::LogMessage::SendToLog()",
                  "    @     0x7f5d1b0c8c74  absl::lts_20230802::log_internal::LogMessage::Flush()", "    @     0x7f5d0a4f2b19  xla::(anonymous namespace)::DistributedRuntimeClientImpl::HeartbeatLoop()",
                  "Fatal Python error: Aborted", "", f"Current thread 0x{ptid:x} (most recent call first):",
                  f'  File "{PY}/jax/experimental/multihost_utils.py", line 108, in sync_global_devices',
                  '  File "/app/lmtrain/train.py", line 92 in main']
        b.write(f"logs/{h}/proc-{n}.log", L)
        # probes
        smi = ["", "==============NVSMI LOG==============", "", f"Timestamp                                 : Fri Nov 27 04:31:1{n} 2026",
               "Driver Version                            : 550.127.05", "CUDA Version                              : 12.4", ""]
        att = f"Attached GPUs                             : {nloc}"
        smi.append(Ind(att) if n == BAD else att)
        for gi, bus in enumerate(BUSES):
            if n == BAD and bus == BADBUS:
                continue
            smi += [f"GPU 00000000:{bus.upper()}:00.0", "    Product Name                          : NVIDIA H100 80GB HBM3",
                    f"    Minor Number                          : {gi}", "    Persistence Mode                      : Enabled",
                    "    PCI", f"        Bus                               : 0x{bus.upper()}", f"        Bus Id                            : 00000000:{bus.upper()}:00.0", ""]
        b.write(f"probes/{h}/nvidia-smi.txt", smi)
        dm = [f"[Fri Nov 27 03:58:{10 + n:02d} 2026] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.127.05  Tue Oct  8 03:22:07 UTC 2024",
              f"[Fri Nov 27 03:58:{21 + n:02d} 2026] nvidia-uvm: Loaded the UVM driver, major device number 508."]
        if n == BAD:
            dm += [Ind(f"[Fri Nov 27 04:09:47 2026] NVRM: GPU 0000:{BADBUS}:00.0: RmInitAdapter failed! (0x25:0xffff:1601)"),
                   f"[Fri Nov 27 04:09:47 2026] NVRM: GPU 0000:{BADBUS}:00.0: rm_init_adapter failed, device minor number 6",
                   f"[Fri Nov 27 04:09:52 2026] NVRM: GPU 0000:{BADBUS}:00.0: RmInitAdapter failed! (0x25:0xffff:1601)",
                   f"[Fri Nov 27 04:09:52 2026] NVRM: GPU 0000:{BADBUS}:00.0: rm_init_adapter failed, device minor number 6"]
        dm.append(f"[Fri Nov 27 04:10:0{n} 2026] IPv6: ADDRCONF(NETDEV_CHANGE): ibp{26 + n}s0: link becomes ready")
        b.write(f"probes/{h}/dmesg.txt", dm)
    b.job(f"""
job_id: "g9b-pt-0412"
name: gemma2-9b-pretrain-jax
framework: other
launcher: "one python process per node, jax.distributed.initialize(coordinator_address=10.72.0.11:1234, num_processes=4)"
status: failed
started_at: 2026-11-27T{hms(T0)}Z
ended_at: 2026-11-27T{hms(T0 + 110)}Z
exit_code: 134
gpus_per_node: 8
parallelism: {{tp: 8, pp: 1, dp: 4, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(8 * i + k) for k in range(8))}]}}\n" for i, h in enumerate(HOSTS)) + """code:
  - {commit: 2d4f6a9, at: 2026-11-16T12:10:00Z, message: "mesh: ici (1,8) x dcn (4,1)"}
  - {commit: f07e13b, at: 2026-11-24T09:55:00Z, message: "data: grain loader, 16 workers"}
checkpoints:
  - {step: 51000, at: 2026-11-26T22:05:00Z, path: gs://lm-ckpt/g9b-pt/51000, valid: true}
  - {step: 52000, at: 2026-11-27T02:31:00Z, path: gs://lm-ckpt/g9b-pt/52000, valid: true}
spares: 1
note: "the previous run (g9b-pt-0408) ended at 03:55 with a node reboot of jx-h100-03 after an Xid"
""")
    b.truth(fault="gpu_unavailable", category="hardware",
            root_cause="after its reboot, GPU 6 (0000:ba:00.0) of jx-h100-03 failed RmInitAdapter and is not visible (nvidia-smi lists 7 GPUs), so process 2 saw 7 local devices (31 global) and aborted its mesh check; the three other processes lost its heartbeat and were terminated by the JAX distributed service",
            faulty_nodes=[HOSTS[BAD]], stage="init", iteration=None,
            actions=[{"kind": "evict", "nodes": [HOSTS[BAD]]}, {"kind": "restart", "from_step": 52000}])
    return b
