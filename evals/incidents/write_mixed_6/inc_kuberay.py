"""Ray Train on Kubernetes (KubeRay RayJob on GKE): head pod logs (`ray start --head`, the in-tree autoscaler
sidecar), the RayJob submitter's `ray job submit` output with the driver's Tune status tables and the
`(autoscaler +Nm)` lines, and cluster events. Three of the four a3-highgpu-8g workers never come: GKE's
scale-up fails with GCE out of resources (ZONE_RESOURCE_POOL_EXHAUSTED); the RayJob hits its deadline."""
import random
from datetime import timedelta
from common import kts_mono, mono_ns, Bundle, T, iso, pylog_ts

IID = "kuberay-raytrain-gke-stockout-never-started"
HEAD, HEAD_IP = "gke-train-cpu-pool-8c21d0a1-q9m3", "10.128.0.41"
GPU0, GPU0_IP = "gke-train-a3-pool-1f2e3d4c-7rz1", "10.128.0.77"
CL = "rayjob-qwen-sft-raycluster-tq8vd"
PODS = [f"{CL}-gpu-group-worker-{s}" for s in ("bk2xr", "fm7wd", "l4j9p", "zq5ct")]
ZONE = "us-central1-a"
IG = f"https://www.googleapis.com/compute/v1/projects/ml-prod-3112/zones/{ZONE}/instanceGroups/gke-train-a3-pool-1f2e3d4c-grp"
T0 = T("2026-11-27T06:00:20")
DEADLINE = 3600


def rl(t, lvl, where, msg):
    sec, ns = mono_ns("rl" + _KEY[0], t)
    return f"{sec.strftime('%Y-%m-%d %H:%M:%S')},{ns // 1000000:03d}\t{lvl} {where} -- {msg}"


_KEY = ["default"]


def kts(t):
    return kts_mono(_KEY[0], t)


def build():
    b = Bundle(IID)
    _KEY[0] = "head"
    H = b.f(f"logs/{HEAD}/{CL}-head-ray-head.log")
    for x in [rl(T0, "INFO", "usage_lib.py:467", "Usage stats collection is disabled."),
              rl(T0, "INFO", "scripts.py:865", "Local node IP: 10.52.3.9"),
              rl(T0 + timedelta(seconds=4), "SUCC", "scripts.py:902", "--------------------"),
              rl(T0 + timedelta(seconds=4), "SUCC", "scripts.py:903", "Ray runtime started."),
              rl(T0 + timedelta(seconds=4), "SUCC", "scripts.py:904", "--------------------")]:
        H.append(f"{kts(T0)} {x}")
    _KEY[0] = "autoscaler"
    A = b.f(f"logs/{HEAD}/{CL}-head-autoscaler.log")
    t = T0 + timedelta(seconds=50)
    A.append(rl(t, "INFO", "monitor.py:703", "Starting autoscaler metrics server on port 44217"))
    A.append(rl(t, "INFO", "monitor.py:162", "session_name: session_2026-11-27_06-00-24_311906_1"))
    A.append(rl(t + timedelta(seconds=21), "INFO", "node_provider.py:257",
                f"Autoscaler is submitting the following patch to RayCluster {CL} in namespace ml."))
    A.append(rl(t + timedelta(seconds=21), "INFO", "node_provider.py:258",
                "[{'op': 'replace', 'path': '/spec/workerGroupSpecs/0/replicas', 'value': 4}]"))
    st = t + timedelta(seconds=60)
    while st < T0 + timedelta(seconds=DEADLINE):
        A += [rl(st, "INFO", "autoscaler.py:426", ""),
              f"======== Autoscaler status: {st.strftime('%Y-%m-%d %H:%M:%S')}.{random.randint(100000, 999999)} ========",
              "Node status", "---------------------------------------------------------------",
              "Active:", " 1 headgroup", " 1 gpu-group", "Pending:", f" gpu-group, 3 launching",
              "Recent failures:", " (no failures)", "", "Resources", "---------------------------------------------------------------",
              "Usage:", " 0.0/28.0 CPU", " 0.0/8.0 GPU", " 0B/1.12TiB memory", " 0B/48.00GiB object_store_memory", "",
              "Demands:", " {'CPU': 20.0, 'GPU': 8.0} * 4 (PACK): 1+ pending placement groups"]
        st += timedelta(seconds=600)
    # RayJob submitter: ray job submit + the driver's output
    _KEY[0] = "submitter"
    S = b.f(f"logs/{HEAD}/rayjob-qwen-sft-submitter.log")
    ts = T0 + timedelta(seconds=60)
    S += [f"{kts(ts)} {rl(ts, 'INFO', 'cli.py:39', f'Job submission server address: http://{CL}-head-svc.ml.svc.cluster.local:8265')}",
          f"{kts(ts)} {rl(ts, 'INFO', 'dashboard_sdk.py:338', 'Uploading package gcs://_ray_pkg_a6c1f30e2b19d4c7.zip.')}",
          kts(ts) + " " + rl(ts, 'INFO', 'packaging.py:575', 'Creating a file package for local module "/workdir".'),
          f"{kts(ts)} -------------------------------------------------------",
          f"{kts(ts)} Job 'rayjob-qwen-sft-7m2lw' submitted successfully",
          f"{kts(ts)} -------------------------------------------------------",
          f"{kts(ts)} ",
          f"{kts(ts)} Next steps",
          f"{kts(ts)}   Query the logs of the job:",
          f"{kts(ts)}     ray job logs rayjob-qwen-sft-7m2lw",
          f"{kts(ts)} Tailing logs until the job exits (disable with --no-wait):"]
    td = ts + timedelta(seconds=4)
    S.append(f"{kts(td)} {rl(td, 'INFO', 'worker.py:1654', f'Connecting to existing Ray cluster at address: 10.52.3.9:6379...')}")
    S.append(f"{kts(td)} {rl(td, 'INFO', 'worker.py:1832', 'Connected to Ray cluster. View the dashboard at 10.52.3.9:8265 ')}")
    S.append(f"{kts(td)} /home/ray/anaconda3/lib/python3.11/site-packages/ray/tune/impl/tuner_internal.py:125: "
             f"RayDeprecationWarning: The `RunConfig` class should be imported from `ray.tune` when passing it to the "
             f"Tuner. Please update your imports. See this issue for more context and migration options: "
             f"https://github.com/ray-project/ray/issues/49454. Disable these warnings by setting the environment "
             f"variable: RAY_TRAIN_ENABLE_V2_MIGRATION_WARNINGS=0")
    S.append(f"{kts(td)} ")
    S.append(f"{kts(td)} View detailed results here: gs://ml-prod-3112-ray/results/qwen25-7b-sft")
    S.append(f"{kts(td)} To visualize your results with TensorBoard, run: `tensorboard --logdir "
             f"/tmp/ray/session_2026-11-27_06-00-24_311906_1/artifacts/2026-11-27_06-01-24/qwen25-7b-sft/driver_artifacts`")
    tq = td + timedelta(seconds=1)
    k = 0
    while tq < T0 + timedelta(seconds=DEADLINE):
        el = int((tq - td).total_seconds())
        S += [f"{kts(tq)} ", f"{kts(tq)} Trial status: 1 PENDING",
              f"{kts(tq)} Current time: {tq.strftime('%Y-%m-%d %H:%M:%S')}. Total running time: "
              + (f"{el // 3600}hr " if el >= 3600 else "") + f"{el % 3600 // 60}min {el % 60}s",
              f"{kts(tq)} Logical resource usage: 0/28 CPUs, 0/8 GPUs (0.0/1.0 accelerator_type:H100)",
              f"{kts(tq)} ╭──────────────────────────────────────────╮",
              f"{kts(tq)} │ Trial name                      status   │",
              f"{kts(tq)} ├──────────────────────────────────────────┤",
              f"{kts(tq)} │ TorchTrainer_5c1a2_00000        PENDING  │",
              f"{kts(tq)} ╰──────────────────────────────────────────╯"]
        if k == 0:
            S.append(f"{kts(tq)} (autoscaler +1m6s) Tip: use `ray status` to view detailed cluster status. To disable these messages, set RAY_SCHEDULER_EVENTS=0.")
            S.append(f"{kts(tq)} (autoscaler +1m6s) Adding 3 node(s) of type gpu-group.")
        if k in (1, 3, 6, 9):
            m = el // 60
            S.append(f"{kts(tq)} (autoscaler +{m}m{random.randint(1, 59)}s) Warning: The following resource request cannot "
                     f"be scheduled right now: {{'CPU': 20.0, 'GPU': 8.0}}. This is likely due to all cluster resources "
                     f"being claimed by actors. Consider creating fewer actors or adding more nodes to this Ray cluster.")
        tq += timedelta(seconds=300)
        k += 1
    tend = T0 + timedelta(seconds=DEADLINE)
    S += [f"{kts(tend)} -------------------------------------------------------",
          f"{kts(tend)} Job 'rayjob-qwen-sft-7m2lw' was stopped",
          f"{kts(tend)} -------------------------------------------------------"]
    # the one GPU worker that exists
    _KEY[0] = "worker"
    W = b.f(f"logs/{GPU0}/{PODS[0]}-ray-worker.log")
    tw = T0 + timedelta(seconds=38)
    W += [f"{kts(tw)} {rl(tw, 'INFO', 'scripts.py:1047', 'Local node IP: 10.52.7.4')}",
          f"{kts(tw)} {rl(tw, 'SUCC', 'scripts.py:1063', '--------------------')}",
          f"{kts(tw)} {rl(tw, 'SUCC', 'scripts.py:1064', 'Ray runtime started.')}",
          f"{kts(tw)} {rl(tw, 'SUCC', 'scripts.py:1065', '--------------------')}",
          f"{kts(tw)} {rl(tw, 'INFO', 'scripts.py:1073', 'To terminate the Ray runtime, run')}",
          f"{kts(tw)} {rl(tw, 'INFO', 'scripts.py:1074', '  ray stop')}",
          f"{kts(tw)} {rl(tw, 'INFO', 'scripts.py:1082', '--block')}"]
    # cluster events and the GCE side
    E = b.f(f"probes/{HEAD}/k8s-events.txt")
    E += [f"$ kubectl -n ml get events --sort-by=.lastTimestamp   (taken {iso(tend - timedelta(seconds=30))})",
          "LAST SEEN   TYPE      REASON              OBJECT                                                    MESSAGE"]
    for p in PODS[1:]:
        E.append(f"58m         Normal    TriggeredScaleUp    pod/{p}   pod triggered scale-up: [{{{IG} 1->4 (max: 8)}}]")
    for p in PODS[1:]:
        E.append(f"3m1s        Warning   FailedScheduling    pod/{p}   0/5 nodes are available: 1 Insufficient nvidia.com/gpu, "
                 f"4 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 1 No preemption "
                 f"victims found for incoming pod, 4 Preemption is not helpful for scheduling.")
    for p in PODS[1:]:
        E.append(f"52s         Warning   FailedScaleUp       pod/{p}   Node scale up in zones {ZONE} associated with this pod "
                 f"failed: GCE out of resources. Pod is at risk of not being scheduled.")
    E.append(f"30s         Warning   DeadlineExceeded    rayjob/rayjob-qwen-sft   The RayJob has passed the activeDeadlineSeconds. StartTime: {iso(T0)}. ActiveDeadlineSeconds: {DEADLINE}")
    E.append(f"41s         Normal    Pending             raycluster/{CL}   Waiting for 3 worker Pods in group gpu-group to be Running")
    G = b.f(f"probes/{HEAD}/gce-instance-group-errors.txt")
    G += [f"$ gcloud compute instance-groups managed list-errors gke-train-a3-pool-1f2e3d4c-grp --zone {ZONE} --limit 4",
          "INSTANCE_URL                                                                                                      ACTION    ERROR_CODE                      ERROR_MESSAGE                                                                                                           TIMESTAMP"]
    for j, sfx in enumerate(("x1v8", "c7dn", "p02k", "w9hs")):
        tt = tend - timedelta(seconds=900 * (4 - j))
        G.append(f"https://www.googleapis.com/compute/v1/projects/ml-prod-3112/zones/{ZONE}/instances/gke-train-a3-pool-1f2e3d4c-{sfx}  "
                 f"CREATING  ZONE_RESOURCE_POOL_EXHAUSTED    The zone 'projects/ml-prod-3112/zones/{ZONE}' does not have enough "
                 f"resources available to fulfill the request.  Try a different zone, or try again later.  {tt.strftime('%Y-%m-%dT%H:%M:%S')}.{random.randint(100, 999)}-08:00")
    b.mark(f"probes/{HEAD}/k8s-events.txt", "failed: GCE out of resources", 1)
    b.mark(f"probes/{HEAD}/gce-instance-group-errors.txt", "ZONE_RESOURCE_POOL_EXHAUSTED", 1)

    job = f"""
job_id: "rayjob-qwen-sft-7m2lw"
name: qwen25-7b-sft
framework: other
trainer: Ray Train TorchTrainer (KubeRay RayJob on GKE)
scheduler: kubernetes
status: failed
started_at: {iso(T0)}
ended_at: {iso(tend)}
gpus_per_node: 8
parallelism: {{tp: 1, pp: 1, dp: 32, cp: 1, ep: 1}}
head: {{host: {HEAD}, ip: {HEAD_IP}, pod: {CL}-head-8w7sd}}
nodes:
  - {{host: {GPU0}, ip: {GPU0_IP}, pod: {PODS[0]}, ranks: [0, 1, 2, 3, 4, 5, 6, 7]}}
""" + "".join(f"  - {{host: null, ip: null, pod: {p}, state: Pending, ranks: [{', '.join(str(8 * (j + 1) + k) for k in range(8))}]}}\n"
              for j, p in enumerate(PODS[1:])) + f"""code:
  - {{commit: 7be3f19, at: 2026-11-21T16:30:00Z, message: "sft: qwen2.5-7b, 4x a3-highgpu-8g"}}
checkpoints: []
spares: 0
"""
    truth = {
        "fault": "cloud_capacity_unavailable",
        "category": "infrastructure",
        "root_cause": f"GKE could not create three more a3-highgpu-8g nodes in {ZONE}: every scale-up of the GPU node "
                      f"pool failed with GCE out of resources (ZONE_RESOURCE_POOL_EXHAUSTED), so the Ray Train placement "
                      f"group of 4x8 GPUs stayed pending until the RayJob deadline; training never started",
        "faulty_nodes": [],
        "stage": "init",
        "iteration": None,
        "actions": [{"kind": "none"}],
        "note": "nothing to evict or roll back: retry in another zone or region, use a reservation, or shrink the job",
    }
    b.write(job, truth)
