"""Megatron-LM on AzureML (user_logs/std_log_process_N.txt, one file per process): one HCA on one node
accumulates symbol errors and its RC QPs hit transport retry exceeded (IBV_WC_RETRY_EXC_ERR, status=12)."""
import datetime as dt
import random

from common import Bundle, job_yaml, ts, ibstat, perfquery, dmesg_boot

ID = "azureml-megatron-ib-retry-exceeded"
HOSTS = [("aml-ndh100v5-0", "10.0.0.4"), ("aml-ndh100v5-1", "10.0.0.5"), ("aml-ndh100v5-2", "10.0.0.6"), ("aml-ndh100v5-3", "10.0.0.7")]
BAD, BADLR = 2, 5
HCAS = [f"mlx5_ib{i}" for i in range(8)]
FAULT_IT = 4087
CK = "/mnt/azureml/cr/j/7f3b2c1a9e/cap/data-capability/wd/checkpoints"


def gid(node, lr):
    return f"fe80::a088:c203:b1:{0xc2 + node:02x}{0xa0 + lr:02x}"


def build(root):
    b = Bundle(root, ID)
    r = random.Random(21)
    t0 = dt.datetime(2026, 11, 22, 4, 1, 7)
    tstart = ts(t0, 281)
    step_s = 6.3
    tfault = ts(tstart, (FAULT_IT - 4000 - 1) * step_s + 2.1)
    for node, (host, ip) in enumerate(HOSTS):
        for lr in range(8):
            rank = node * 8 + lr
            tp, dp, pp = rank % 8, (rank // 8) % 2, rank // 16
            pid = 1400 + lr * 3 + node
            L = []
            if rank == 0:
                L += ["using world size: 32, data-parallel size: 2, context-parallel size: 1, tensor-model-parallel size: 8, pipeline-model-parallel size: 2 ",
                      "WARNING: Setting args.overlap_p2p_comm to False since non-interleaved schedule does not support overlapping p2p communication",
                      "------------------------ arguments ------------------------",
                      "  global_batch_size ............................... 512",
                      "  log_interval .................................... 1",
                      "  micro_batch_size ................................ 1",
                      f"  save ............................................ {CK}",
                      "  save_interval ................................... 500",
                      "  seq_length ...................................... 4096",
                      "-------------------- end of arguments ---------------------",
                      "> building GPT2BPETokenizer tokenizer ...",
                      " > padded vocab (size: 50257) with 431 dummy tokens (new size: 50688)",
                      "> initializing torch distributed ...",
                      "> initialized tensor model parallel with size 8",
                      "> initialized pipeline model parallel with size 2",
                      "> setting random seeds to 1234 ...",
                      "> compiling dataset index builder ...",
                      ">>> done with dataset index builder. Compilation time: 0.071 seconds"]
            L.append(f"{host}:{pid}:{pid} [{lr}] NCCL INFO NET/IB : Using [0]mlx5_ib0:1/IB [1]mlx5_ib1:1/IB [2]mlx5_ib2:1/IB [3]mlx5_ib3:1/IB [4]mlx5_ib4:1/IB [5]mlx5_ib5:1/IB [6]mlx5_ib6:1/IB [7]mlx5_ib7:1/IB [RO]; OOB eth0:{ip}<0>")
            L.append(f"{host}:{pid}:{pid} [{lr}] NCCL INFO Using network IB")
            L.append(f"/opt/conda/lib/python3.10/site-packages/transformer_engine/pytorch/cpu_offload.py:592: DeprecationWarning: Offloading weights is deprecated. Using offload_weights=True does not have any effect.")
            L.append("  warnings.warn(")
            if rank == 0:
                L += [f"loading checkpoint from {CK} at iteration 4000",
                      f"  successfully loaded checkpoint from {CK} [ t 0/8, p 0/2 ] at iteration 4000",
                      "(min, max) time across ranks (ms):",
                      "    load-checkpoint ................................: (41102.33, 41140.90)",
                      f"[after model, optimizer, and learning rate scheduler are built] datetime: {ts(t0, 214).strftime('%Y-%m-%d %H:%M:%S')} ",
                      "> building train, validation, and test datasets ...",
                      f"[after dataloaders are built] datetime: {ts(t0, 276).strftime('%Y-%m-%d %H:%M:%S')} ",
                      "done with setup ...",
                      "training ...",
                      f"[before the start of training step] datetime: {tstart.strftime('%Y-%m-%d %H:%M:%S')} "]
            if rank == 31:
                for it in range(4001, FAULT_IT):
                    t = ts(tstart, (it - 4000) * step_s)
                    loss = 2.21 - (it - 4000) * 0.0002 + r.uniform(-0.02, 0.02)
                    L.append(f" [{t.strftime('%Y-%m-%d %H:%M:%S')}] iteration     {it}/  100000 | consumed samples:      {it * 512} | elapsed time per iteration (ms): {step_s * 1000 + r.uniform(-40, 60):.1f} | learning rate: {2.99e-4 - (it - 4000) * 1e-9:.3E} | global batch size:   512 | lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: {r.uniform(0.27, 0.33):.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |")
            tw = ts(tfault, 0.4 + lr * 0.001)
            wt = f"{tw.strftime('%m%d %H:%M:%S')}.{tw.microsecond:06d}512"
            peer = None
            if (node, lr) == (BAD, BADLR):
                peer = ("10.0.0.7", gid(3, BADLR), "Send", 52114)
            elif (node, lr) in ((3, BADLR), (0, BADLR)):
                peer = ("10.0.0.6", gid(BAD, BADLR), "Recv", 49311 if node == 3 else 50902)
            if peer:
                pip, pgid, kind, port = peer
                wline = f"NET/IB : Got completion from peer {pip}<{port}> with status=12 opcode={0 if kind == 'Send' else 129} len=0 vendor err 129 ({kind}) localGid {gid(node, lr)} remoteGids{pgid}"
                L += ["", f"{host}:{pid}:{pid + 713} [{lr}] transport/net_ib.cc:1696 NCCL WARN {wline}",
                      f"{host}:{pid}:{pid + 713} [{lr}] NCCL INFO transport/net.cc:1302 -> 6",
                      f"{host}:{pid}:{pid + 713} [{lr}] NCCL INFO proxy.cc:698 -> 6",
                      f"{host}:{pid}:{pid + 713} [{lr}] NCCL INFO proxy.cc:878 -> 6 [Progress Thread]"]
                pg = 3 if node != 0 else 5
                msg = f"[PG {pg} Rank {1 if node == 3 else 0 if node == BAD and pg == 3 else 0}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5"
                L += [f"[rank{rank}]:[E{wt} ProcessGroupNCCL.cpp:1563] {msg}",
                      "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
                      "Last error:", wline,
                      "Exception raised from checkForNCCLErrorsInternal at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1860 (most recent call first):",
                      "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3c1a2b8f86 in /opt/conda/lib/python3.10/site-packages/torch/lib/libc10.so)",
                      "frame #1: c10d::ProcessGroupNCCL::checkForNCCLErrorsInternal(std::shared_ptr<c10d::NCCLComm>&) + 0x220 (0x7f3bcb6f8e70 in /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)",
                      "frame #2: c10d::ProcessGroupNCCL::WorkNCCL::checkAndSetException() + 0x7c (0x7f3bcb6f90bc in /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)",
                      "frame #3: c10d::ProcessGroupNCCL::watchdogHandler() + 0x213 (0x7f3bcb6ff5c3 in /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)",
                      "frame #4: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x7f3bcb700d7c in /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)",
                      "frame #5: <unknown function> + 0xdc253 (0x7f3c1a9d9253 in /lib/x86_64-linux-gnu/libstdc++.so.6)",
                      "frame #6: <unknown function> + 0x94ac3 (0x7f3c1ba33ac3 in /lib/x86_64-linux-gnu/libc.so.6)",
                      "frame #7: <unknown function> + 0x126850 (0x7f3c1bac5850 in /lib/x86_64-linux-gnu/libc.so.6)",
                      "", "terminate called after throwing an instance of 'c10::DistBackendError'",
                      f"  what():  {msg}"]
            elif node != BAD and lr in (0, 3, 6):
                tt = ts(tfault, 600.05 + lr * 0.002)
                L.append(f"[rank{rank}]:[E{tt.strftime('%m%d %H:%M:%S')}.{tt.microsecond:06d}377 ProcessGroupNCCL.cpp:607] [Rank {tp if pp == 0 else tp}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={408712 + lr}, OpType=_ALLGATHER_BASE, NumelIn=13107200, NumelOut=26214400, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.")
            b.add(f"logs/{host}/std_log_process_{rank}.txt", L)
        # probes
        b.add(f"probes/{host}/ibstat.txt", ibstat(HCAS, 0xa088c20300b1c200 + node * 0x100, 100 + node * 8))
        pq = []
        for k, ca in enumerate(HCAS):
            bad = node == BAD and k == BADLR
            pq += [f"$ perfquery -C {ca} -P 1"]
            pq += perfquery(ca, 100 + node * 8 + k, seed=node * 10 + k, counters=(
                {"SymbolErrorCounter": 65535, "LinkErrorRecoveryCounter": 255, "LinkDownedCounter": 0,
                 "PortRcvErrors": 18934, "LocalLinkIntegrityErrors": 15, "PortXmitDiscards": 412} if bad else
                {"SymbolErrorCounter": r.choice([0, 0, 0, 1, 2])}))
            pq.append("")
        b.add(f"probes/{host}/ib-counters.txt", pq)
        b.add(f"probes/{host}/dmesg.txt", dmesg_boot(ts(t0, -86400 * 3), host, seed=node))
    bad = f"logs/{HOSTS[BAD][0]}/std_log_process_{BAD * 8 + BADLR}.txt"
    b.mark(bad, "NCCL WARN NET/IB : Got completion from peer 10.0.0.7")
    b.mark(bad, "Process group watchdog thread terminated with exception")
    b.mark(f"probes/{HOSTS[BAD][0]}/ib-counters.txt", "SymbolErrorCounter:..............65535")
    b.mark(f"probes/{HOSTS[BAD][0]}/ib-counters.txt", "LinkErrorRecoveryCounter:........255")
    b.mark(f"probes/{HOSTS[BAD][0]}/ib-counters.txt", "PortRcvErrors:...................18934")
    nodes = [(h, ip, list(range(i * 8, i * 8 + 8))) for i, (h, ip) in enumerate(HOSTS)]
    y = job_yaml("ashy_lamp_7f3b2c1a9e", "gpt3-13b-megatron-aml", "megatron", "failed", t0, ts(tfault, 655), 1, 8,
                 (8, 2, 2, 1), nodes,
                 [("91b0d3e", dt.datetime(2026, 11, 12, 8, 0), "megatron core_r0.9.0 rebase"),
                  ("5ac7e21", dt.datetime(2026, 11, 19, 13, 25), "data: dedup v3 blend")],
                 [(3500, dt.datetime(2026, 11, 21, 22, 47), f"{CK}/iter_0003500", True),
                  (4000, dt.datetime(2026, 11, 22, 3, 41), f"{CK}/iter_0004000", True)],
                 extra={"scheduler": "azureml", "compute": "Standard_ND96isr_H100_v5 x4", "log_layout": "user_logs/std_log_process_<global rank>.txt"})
    truth = {"fault": "ib_transport_retry_exceeded", "category": "network",
             "root_cause": "InfiniBand port mlx5_ib5 on aml-ndh100v5-2 (rail of GPU 5) had saturated symbol errors and link error recoveries (perfquery); its RC sends to 10.0.0.7 completed with status=12 (transport retry counter exceeded) and rank 21's NCCL watchdog aborted the job at iteration 4087",
             "faulty_nodes": [HOSTS[BAD][0]], "stage": "training", "iteration": FAULT_IT,
             "actions": [{"kind": "evict", "nodes": [HOSTS[BAD][0]]}, {"kind": "restart", "from_step": 4000}]}
    return b.write(y, truth)
