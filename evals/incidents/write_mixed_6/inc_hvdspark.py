"""Horovod on Spark (horovod.spark.run with gloo; each training process's output tagged `[rank]<stdout>:` /
`[rank]<stderr>:` inside the YARN container log, Spark's log4j `yy/MM/dd HH:mm:ss LEVEL Class: msg` around it).
A rack of HDFS datanodes went away: Petastorm readers on every node get BlockMissingException from libhdfs and
pyarrow's `OSError: HDFS read failed`; Horovod terminates the job."""
import random
from datetime import timedelta
from common import Bundle, T, iso, nccl_init_lines

IID = "horovod-spark-petastorm-hdfs-blockmissing-4node"
HOSTS = ["yarn-gpu-031", "yarn-gpu-032", "yarn-gpu-033", "yarn-gpu-034"]
IPS = ["10.30.4.31", "10.30.4.32", "10.30.4.33", "10.30.4.34"]
T0 = T("2026-11-27T02:58:40")
SP = "/opt/conda/envs/hvd/lib/python3.9/site-packages"
BP = "BP-1420987712-10.30.0.2-1699312004711"
DEAD = ["10.30.5.21", "10.30.5.22", "10.30.5.23"]
LAST = 2930


def l4(t, lvl, cls, msg):
    return f"{t.strftime('%y/%m/%d %H:%M:%S')} {lvl} {cls}: {msg}"


def build():
    b = Bundle(IID)
    logs = {h: [] for h in HOSTS}
    for i, h in enumerate(HOSTS):
        L = logs[h]
        t = T0 + timedelta(seconds=2 + i)
        L.append(l4(t, "INFO", "CoarseGrainedExecutorBackend", f"Started daemon with process name: {31200 + i * 17}@{h}"))
        L.append(l4(t, "INFO", "SignalUtils", "Registered signal handler for TERM"))
        L.append(l4(t, "INFO", "SecurityManager", "Changing view acls to: ctr"))
        L.append(l4(t + timedelta(seconds=1), "INFO", "TransportClientFactory",
                    f"Successfully created connection to /{IPS[0]}:38211 after 41 ms (0 ms spent in bootstraps)"))
        L.append(l4(t + timedelta(seconds=3), "INFO", "CoarseGrainedExecutorBackend", "Successfully registered with driver"))
        L.append(l4(t + timedelta(seconds=3), "INFO", "Executor", f"Starting executor ID {i + 1} on host {h}"))
        L.append(l4(t + timedelta(seconds=9), "INFO", "Executor", f"Running task {i}.0 in stage 4.0 (TID {40 + i})"))
        L.append(l4(t + timedelta(seconds=9), "WARN", "NativeCodeLoader",
                    "Unable to load native-hadoop library for your platform... using builtin-java classes where applicable"))
        for lr in range(4):
            r = 4 * i + lr
            L.append(f"[{r}]<stderr>:{SP}/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. It will be "
                     f"removed in the future and UntypedStorage will be the only storage class. This should only matter "
                     f"to you if you are using storages directly.  To access UntypedStorage directly, use "
                     f"tensor.untyped_storage() instead of tensor.storage()")
        for lr in (0, 2):
            L += [f"[{4 * i + lr}]<stdout>:{x}" for x in nccl_init_lines(h, 33400 + 100 * i + lr, lr, IPS[i], iface="eth0", hcas=2)]
        L.append(f"[{4 * i}]<stderr>:{SP}/petastorm/fs_utils.py:88: FutureWarning: pyarrow.hdfs.connect is deprecated as "
                 f"of 2.0.0, please use pyarrow.fs.HadoopFileSystem instead.")
    L0 = []   # the Spark driver (YARN AM container 000001, on yarn-gpu-031)
    L0.append(l4(T0, "INFO", "SparkContext", "Running Spark version 3.4.1"))
    L0.append(l4(T0 + timedelta(seconds=1), "INFO", "SparkContext", "Submitted application: dlrm-ctr-v7-hvd-spark"))
    L0.append(l4(T0 + timedelta(seconds=30), "INFO", "DAGScheduler", "Submitting 4 missing tasks from ResultStage 4 (MapPartitionsRDD[9] at mapPartitionsWithIndex at NativeMethodAccessorImpl.java:0)"))
    L0.append("[0]<stdout>:restored checkpoint hdfs://nn-ctr/user/ctr/ckpt/dlrm-ctr/step_2500.pt (step 2500)")
    t = T0 + timedelta(seconds=75)
    for step in range(2510, LAST + 1, 10):
        t += timedelta(seconds=9.6 + random.random())
        L0.append(f"[0]<stdout>:epoch 3 step {step} loss {0.4412 - (step - 2500) * 0.000004 + random.uniform(-0.004, 0.004):.4f} "
                  f"auc {0.7714 + random.uniform(-0.002, 0.002):.4f} samples/s {132000 + random.randint(-3000, 3000)}")
        if step == 2700:
            L0.append(f"[0]<stdout>:checkpoint saved to hdfs://nn-ctr/user/ctr/ckpt/dlrm-ctr/step_2700.pt")
    # HDFS errors on every node (the failing ranks differ)
    tf = t + timedelta(seconds=7)
    fail = {0: [1, 3], 1: [5], 2: [8, 10], 3: [14]}
    first = None
    for i, h in enumerate(HOSTS):
        L = logs[h]
        for r in fail[i]:
            part = random.randint(100, 999)
            blk = random.randint(1109800000, 1109899999)
            tt = tf + timedelta(seconds=random.randint(0, 4))
            f = f"/user/ctr/data/ctr_v7/train/part-00{part}-7f1c0e2a-c000.snappy.parquet"
            for d in DEAD[:2]:
                L.append(f"[{r}]<stderr>:" + l4(tt, "WARN", "hdfs.DFSClient",
                                                  f"Failed to connect to /{d}:9866 for block {BP}:blk_{blk}_{blk - 1073700000}, "
                                                  f"add to deadNodes and continue. java.net.ConnectException: Connection refused"))
            L.append(f"[{r}]<stderr>:" + l4(tt + timedelta(seconds=3), "WARN", "hdfs.DFSClient",
                                              f"No live nodes contain block {BP}:blk_{blk}_{blk - 1073700000} after checking "
                                              f"nodes = [DatanodeInfoWithStorage[{DEAD[0]}:9866,DS-6a1f0c77,DISK], "
                                              f"DatanodeInfoWithStorage[{DEAD[1]}:9866,DS-0be2d911,DISK], "
                                              f"DatanodeInfoWithStorage[{DEAD[2]}:9866,DS-93c4a0e5,DISK]], ignoredNodes = null"))
            L.append(f"[{r}]<stderr>:hdfsPread: FSDataInputStream#read error:")
            L.append(f"[{r}]<stderr>:org.apache.hadoop.hdfs.BlockMissingException: Could not obtain block: "
                     f"{BP}:blk_{blk}_{blk - 1073700000} file={f}")
            L += [f"[{r}]<stderr>:\tat org.apache.hadoop.hdfs.DFSInputStream.refetchLocations(DFSInputStream.java:1019)",
                  f"[{r}]<stderr>:\tat org.apache.hadoop.hdfs.DFSInputStream.chooseDataNode(DFSInputStream.java:1002)",
                  f"[{r}]<stderr>:\tat org.apache.hadoop.hdfs.DFSInputStream.fetchBlockByteRange(DFSInputStream.java:1164)",
                  f"[{r}]<stderr>:\tat org.apache.hadoop.hdfs.DFSInputStream.pread(DFSInputStream.java:1572)",
                  f"[{r}]<stderr>:\tat org.apache.hadoop.fs.FSDataInputStream.read(FSDataInputStream.java:121)"]
            L += [f"[{r}]<stderr>:Traceback (most recent call last):",
                  f'[{r}]<stderr>:  File "/home/ctr/train_dlrm.py", line 212, in train_fn',
                  f"[{r}]<stderr>:    for step, batch in enumerate(loader, start=start_step):",
                  f'[{r}]<stderr>:  File "{SP}/petastorm/pytorch.py", line 123, in __iter__',
                  f"[{r}]<stderr>:    for row in self._iter_impl():",
                  f'[{r}]<stderr>:  File "{SP}/petastorm/reader.py", line 638, in __next__',
                  f"[{r}]<stderr>:    return self._results_queue_reader.read_next(self._workers_pool, self.schema, self.ngram)",
                  f'[{r}]<stderr>:  File "{SP}/petastorm/arrow_reader_worker.py", line 62, in read_next',
                  f"[{r}]<stderr>:    result_table = workers_pool.get_results()",
                  f'[{r}]<stderr>:  File "{SP}/petastorm/workers_pool/thread_pool.py", line 217, in get_results',
                  f"[{r}]<stderr>:    raise e",
                  f'[{r}]<stderr>:  File "pyarrow/io.pxi", line 411, in pyarrow.lib.NativeFile.read_at',
                  f'[{r}]<stderr>:  File "pyarrow/error.pxi", line 115, in pyarrow.lib.check_status',
                  f"[{r}]<stderr>:OSError: HDFS read failed, errno: 255 (Unknown error 255) Please check that you are "
                  f"connecting to the correct HDFS RPC port"]
            if first is None:
                first = r
        L.append(l4(tf + timedelta(seconds=9), "ERROR", "Executor",
                    f"Exception in task {i}.0 in stage 4.0 (TID {40 + i})"))
    L0.append(f"Process {first} exit with status code 1.")
    L0.append(f"Terminating remaining workers after failure of Process {first}.")
    L0 += ["Traceback (most recent call last):",
           '  File "/home/ctr/launch_hvd_spark.py", line 61, in <module>',
           "    horovod.spark.run(train_fn, args=(cfg,), num_proc=16, use_gloo=True, verbose=2)",
           f'  File "{SP}/horovod/spark/runner.py", line 285, in run',
           "    _launch_job(use_mpi, use_gloo, settings, driver, env, stdout, stderr, executable)",
           f'  File "{SP}/horovod/spark/gloo_run.py", line 82, in gloo_run',
           "    launch_gloo(command, exec_command, settings, nics, {}, server_ip)",
           f'  File "{SP}/horovod/runner/gloo_run.py", line 292, in launch_gloo',
           "    raise RuntimeError('Horovod detected that one or more processes exited with non-zero '",
           "RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing the job "
           "to be terminated. The first process to do so was:",
           f"Process name: {first}",
           "Exit code: 1"]
    b.f(f"logs/{HOSTS[0]}/container_e42_1763990011_0388_01_000001.stderr").extend(L0)
    for h in HOSTS:
        b.f(f"logs/{h}/container_e42_1763990011_0388_01_00000{HOSTS.index(h) + 2}.stderr").extend(logs[h])
    rel = lambda i: f"logs/{HOSTS[i]}/container_e42_1763990011_0388_01_00000{i + 2}.stderr"
    b.mark(rel(0), "OSError: HDFS read failed", 1)
    b.mark(rel(0), "BlockMissingException: Could not obtain block", 1)
    b.mark(rel(2), "BlockMissingException: Could not obtain block", 1)
    b.mark(rel(3), "OSError: HDFS read failed", 1)

    job = f"""
job_id: "application_1763990011_0388"
name: dlrm-ctr-v7-hvd-spark
framework: other
trainer: horovod.spark.run (gloo) + PyTorch + Petastorm
scheduler: yarn
status: failed
started_at: {iso(T0)}
ended_at: {iso(tf + timedelta(seconds=15))}
exit_code: 1
gpus_per_node: 4
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(4 * i + k) for k in range(4))}]}}\n"
              for i, h in enumerate(HOSTS)) + f"""code:
  - {{commit: a03e9b7, at: 2026-11-02T08:00:00Z, message: "dlrm: ctr_v7 features"}}
checkpoints:
  - {{step: 2500, at: 2026-11-27T01:40:00Z, path: hdfs://nn-ctr/user/ctr/ckpt/dlrm-ctr/step_2500.pt, valid: true}}
  - {{step: 2700, at: {iso(T0 + timedelta(seconds=75 + 20 * 10))}, path: hdfs://nn-ctr/user/ctr/ckpt/dlrm-ctr/step_2700.pt, valid: true}}
data: hdfs://nn-ctr/user/ctr/data/ctr_v7/train (parquet, replication 3)
"""
    truth = {
        "fault": "hdfs_error",
        "category": "infrastructure",
        "root_cause": "the three HDFS datanodes holding the replicas of many ctr_v7 parquet blocks (10.30.5.21-23, one "
                      "rack) stopped answering; Petastorm readers on every node got BlockMissingException from libhdfs "
                      "and pyarrow raised 'OSError: HDFS read failed', so Horovod terminated the job",
        "faulty_nodes": [],
        "stage": "training",
        "iteration": None,
        "actions": [{"kind": "restart", "from_step": 2700}],
        "note": "nothing to evict: the training nodes are healthy; restart once HDFS reports the blocks live again "
                "(hdfs fsck shows no missing blocks). Rank 0 logs every 10 steps, so the failing step is only known to be "
                "after 2930: iteration left null",
    }
    b.write(job, truth)
