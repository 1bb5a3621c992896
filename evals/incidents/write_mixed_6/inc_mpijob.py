"""Kubeflow MPIJob (mpi-operator v2beta1): launcher pod running mpirun over ssh, four worker pods running sshd,
all captured with `kubectl logs --timestamps`. Worker 2 lands on k8s-gpu-a19, whose NVIDIA user-space libraries
were upgraded without a reboot: the nvidia-container-cli prestart hook fails with a driver/library version
mismatch, the worker never starts, the launcher cannot reach it and mpirun gives up."""
import random
from datetime import timedelta
from common import kts_mono, mono_ns, Bundle, T, iso, dmesg_T, dmesg_boot_noise

IID = "mpijob-k8s-nvml-mismatch-oci-hook-4node"
WORKERS = ["k8s-gpu-a17", "k8s-gpu-a18", "k8s-gpu-a19", "k8s-gpu-a20"]
IPS = ["10.60.1.17", "10.60.1.18", "10.60.1.19", "10.60.1.20"]
POD_IPS = ["192.168.41.12", "192.168.77.3", None, "192.168.12.40"]
LAUNCH_HOST, LAUNCH_IP = "k8s-cpu-b02", "10.60.0.2"
BAD = 2
JOB = "bert-large-mpi"
T0 = T("2026-11-27T05:00:14")


_KEY = ["default"]


def kts(t):
    return kts_mono(_KEY[0], t)


ORTE = ["--------------------------------------------------------------------------",
        "ORTE was unable to reliably start one or more daemons.",
        "This usually is caused by:",
        "",
        "* not finding the required libraries and/or binaries on",
        "  one or more nodes. Please check your PATH and LD_LIBRARY_PATH",
        "  settings, or configure OMPI with --enable-orterun-prefix-by-default",
        "",
        "* lack of authority to execute on one or more specified nodes.",
        "  Please verify your allocation and authorities.",
        "",
        "* the inability to write startup files into /tmp (--tmpdir/orte_tmpdir_base).",
        "  Please check with your sys admin to determine the correct location to use.",
        "",
        "*  compilation of the orted with dynamic libraries when static are required",
        "  (e.g., on Cray). Please check your configure cmd line and consider using",
        "  one of the contrib/platform definitions for your system type.",
        "",
        "* an inability to create a connection back to mpirun due to a",
        "  lack of common network interfaces and/or no route found between",
        "  them. Please check network connectivity (including firewalls",
        "  and network routing requirements).",
        "--------------------------------------------------------------------------",
        "ORTE does not know how to route a message to the specified daemon",
        "located on the indicated node:",
        "",
        f"  my node:   {JOB}-launcher-x7k2q",
        f"  target node:  {JOB}-worker-0",
        "",
        "This is usually an internal programming error that should be",
        "reported to the developers. In the meantime, a workaround may",
        "be to set the MCA param routed=direct on the command line or",
        "in your environment. We apologize for the problem.",
        "--------------------------------------------------------------------------"]


def build():
    b = Bundle(IID)
    # launcher: three attempts (restartPolicy OnFailure, backoffLimit 2)
    _KEY[0] = "launcher"
    L = b.f(f"logs/{LAUNCH_HOST}/{JOB}-launcher.log")
    t = T0 + timedelta(seconds=20)
    for attempt in range(3):
        L.append(f"{kts(t)} Warning: Permanently added '{JOB}-worker-0.{JOB}-worker.ml.svc,{POD_IPS[0]}' (ED25519) to the list of known hosts.")
        L.append(f"{kts(t)} Warning: Permanently added '{JOB}-worker-1.{JOB}-worker.ml.svc,{POD_IPS[1]}' (ED25519) to the list of known hosts.")
        L.append(f"{kts(t + timedelta(seconds=1))} ssh: Could not resolve hostname {JOB}-worker-2.{JOB}-worker.ml.svc: Name or service not known")
        L.append(f"{kts(t + timedelta(seconds=1))} Warning: Permanently added '{JOB}-worker-3.{JOB}-worker.ml.svc,{POD_IPS[3]}' (ED25519) to the list of known hosts.")
        for x in ORTE:
            L.append(f"{kts(t + timedelta(seconds=2))} {x}")
        t += timedelta(seconds=[40, 80, 0][attempt] + 5)
    # worker pods on the healthy nodes: sshd only
    for i, h in enumerate(WORKERS):
        if i == BAD:
            continue
        _KEY[0] = h
        W = b.f(f"logs/{h}/{JOB}-worker-{i}.log")
        tt = T0 + timedelta(seconds=6 + i)
        W.append(f"{kts(tt)} Server listening on 0.0.0.0 port 22.")
        W.append(f"{kts(tt)} Server listening on :: port 22.")
        tk = T0 + timedelta(seconds=20)
        for attempt in range(3):
            W.append(f"{kts(tk)} Accepted publickey for root from 192.168.3.{51 + attempt} port {40000 + random.randint(0, 20000)} ssh2: "
                     f"ED25519 SHA256:Zr0s8cU1pN5n0wqzJb7yJ3ZfY7o1qFq4yQxY2k1p0aE")
            W.append(f"{kts(tk + timedelta(seconds=2))} Received disconnect from 192.168.3.{51 + attempt} port "
                     f"{40000 + random.randint(0, 20000)}:11: disconnected by user")
            W.append(f"{kts(tk + timedelta(seconds=2))} Disconnected from user root 192.168.3.{51 + attempt} port {40000 + random.randint(0, 20000)}")
            tk += timedelta(seconds=[45, 85, 0][attempt])
    # probes on the bad node: pod events, nvidia-smi, dmesg
    h = WORKERS[BAD]
    E = b.f(f"probes/{h}/k8s-pod-events.txt")
    E += [f"$ kubectl -n ml describe pod {JOB}-worker-2   (Events section, taken {iso(t + timedelta(seconds=30))})",
          "Events:",
          "  Type     Reason     Age                    From               Message",
          "  ----     ------     ----                   ----               -------",
          f"  Normal   Scheduled  4m31s                  default-scheduler  Successfully assigned ml/{JOB}-worker-2 to {h}",
          f"  Normal   Pulled     2m2s (x5 over 4m30s)   kubelet            Container image \"nvcr.io/nvidia/pytorch:24.10-py3-bert\" already present on machine",
          "  Normal   Created    2m2s (x5 over 4m30s)   kubelet            Created container: worker",
          "  Warning  Failed     2m1s (x5 over 4m29s)   kubelet            Error: failed to create containerd task: failed to create "
          "shim task: OCI runtime create failed: runc create failed: unable to start container process: error during "
          "container init: error running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'",
          "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown",
          f"  Warning  BackOff    12s (x19 over 4m25s)   kubelet            Back-off restarting failed container worker in pod {JOB}-worker-2_ml(6f1d2c9e-3b0a-4c51-9d0e-6c0f3a1b7e42)"]
    E += ["", f"$ kubectl -n ml get pods -l training.kubeflow.org/job-name={JOB} -o wide",
          "NAME                           READY   STATUS               RESTARTS      AGE     IP               NODE",
          f"{JOB}-launcher-x7k2q       0/1     Error                2             4m33s   192.168.3.53     {LAUNCH_HOST}",
          f"{JOB}-worker-0             1/1     Running              0             4m34s   {POD_IPS[0]}    {WORKERS[0]}",
          f"{JOB}-worker-1             1/1     Running              0             4m34s   {POD_IPS[1]}     {WORKERS[1]}",
          f"{JOB}-worker-2             0/1     CrashLoopBackOff     5 (12s ago)   4m34s   192.168.90.7     {WORKERS[2]}",
          f"{JOB}-worker-3             1/1     Running              0             4m34s   {POD_IPS[3]}    {WORKERS[3]}"]
    N = b.f(f"probes/{h}/nvidia-smi.txt")
    N += ["Failed to initialize NVML: Driver/library version mismatch", "NVML library version: 550.127"]
    boot = T("2026-10-30T07:02:11")
    for i, hh in enumerate(WORKERS):
        D = b.f(f"probes/{hh}/dmesg.txt")
        D += dmesg_boot_noise(boot, hh)
        if i == BAD:
            tm = T("2026-11-27T04:58:03")
            D += [f"{dmesg_T(tm)} NVRM: API mismatch: the client has the version 550.127.05, but",
                  f"{dmesg_T(tm)} NVRM: this kernel module has the version 550.90.07.  Please",
                  f"{dmesg_T(tm)} NVRM: make sure that this kernel module and all NVIDIA driver",
                  f"{dmesg_T(tm)} NVRM: components have the same version."]
        else:
            D.append(f"{dmesg_T(T0 + timedelta(seconds=4))} IPv6: ADDRCONF(NETDEV_CHANGE): cali{random.getrandbits(40):010x}: link becomes ready")
    J = b.f(f"probes/{h}/journal-unattended-upgrades.txt")
    J += ["Nov 27 04:57:41 k8s-gpu-a19 unattended-upgrade[811422]: Packages that will be upgraded: libnvidia-compute-550 "
          "libnvidia-container-tools libnvidia-container1 nvidia-utils-550",
          "Nov 27 04:58:02 k8s-gpu-a19 unattended-upgrade[811422]: All upgrades installed",
          "Nov 27 04:58:02 k8s-gpu-a19 systemd[1]: unattended-upgrades.service: Deactivated successfully."]
    b.mark(f"probes/{h}/k8s-pod-events.txt", "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch")
    b.mark(f"probes/{h}/k8s-pod-events.txt", "Error: failed to create containerd task")
    b.mark(f"probes/{h}/nvidia-smi.txt", "Failed to initialize NVML: Driver/library version mismatch")
    b.mark(f"probes/{h}/dmesg.txt", "NVRM: API mismatch")

    job = f"""
job_id: "{JOB}"
name: {JOB}
framework: other
trainer: NVIDIA BERT pretraining (PyTorch, mpirun under Kubeflow mpi-operator v2beta1)
scheduler: kubernetes
status: failed
started_at: {iso(T0)}
ended_at: {iso(t + timedelta(seconds=3))}
exit_code: 1
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
launcher: {{host: {LAUNCH_HOST}, ip: {LAUNCH_IP}, pod: {JOB}-launcher-x7k2q}}
nodes:
""" + "".join(f"  - {{host: {hh}, ip: {IPS[i]}, pod: {JOB}-worker-{i}, ranks: [{', '.join(str(8 * i + k) for k in range(8))}]}}\n"
              for i, hh in enumerate(WORKERS)) + f"""code:
  - {{commit: 0c4d1f8, at: 2026-11-20T13:00:00Z, message: "phase2 seq 512, lamb lr 4e-3"}}
checkpoints:
  - {{step: 6000, at: 2026-11-26T22:10:00Z, path: /mnt/ckpt/bert-large/ckpt_6000.pt, valid: true}}
  - {{step: 6500, at: 2026-11-27T04:51:00Z, path: /mnt/ckpt/bert-large/ckpt_6500.pt, valid: false}}
spares: 2
"""
    truth = {
        "fault": "container_runtime_error",
        "category": "infrastructure",
        "root_cause": f"on {h} the NVIDIA user-space libraries were upgraded to 550.127 while the loaded kernel module is "
                      f"550.90.07; the nvidia-container-cli prestart hook fails with 'nvml error: driver/library version "
                      f"mismatch', so worker-2's container is never created and mpirun in the launcher cannot reach it",
        "faulty_nodes": [h],
        "stage": "init",
        "iteration": None,
        "actions": [{"kind": "evict", "nodes": [h]}, {"kind": "restart", "from_step": 6000}],
        "note": "the step-6500 checkpoint was cut short by the previous job's preemption (valid: false); the node needs "
                "a reboot (or a driver reload) before it takes GPU pods again",
    }
    b.write(job, truth)
