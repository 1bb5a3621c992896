"""RoCE completion-queue errors (retry exceeded) from one node's bonded RoCE NIC.
Horovod (PyTorch) under OpenMPI `mpirun --output-filename`: one folder per rank, 1/rank.N/{stdout,stderr}."""
import random
from common import Bundle, Ind, hms, frac

IID = "ompi-outfile-horovod-roce-cqe-bond-4node"
HOSTS = ["roce-gpu-01", "roce-gpu-02", "roce-gpu-03", "roce-gpu-04"]
IPS = ["10.44.2.11", "10.44.2.12", "10.44.2.13", "10.44.2.14"]
BAD = 2
GPN = 4
LAST_OK = 14212
T0 = 3 * 3600 + 2 * 60 + 11          # wall clock of the launch (s of day)
STEP_S = 0.83


def ts(t):
    return f"2026-11-27 {hms(t)}.{frac(t)}"


def build(root):
    b = Bundle(root, IID)
    rnd = random.Random(1311)
    t_fault = T0 + 95 + (LAST_OK - 14000) * STEP_S + 0.41
    for n, h in enumerate(HOSTS):
        for g in range(GPN):
            r = n * GPN + g
            pid = 51200 + 37 * n + g
            out, err = [], []
            P = f"{h}:{pid}:{pid} [{g}]"
            if r == 0:
                out.append(f"{P} NCCL INFO Bootstrap : Using bond0:{IPS[n]}<0>")
                out.append(f"{P} NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation")
                out.append(f"{P} NCCL INFO cudaDriverVersion 12040")
                out.append("NCCL version 2.21.5+cuda12.4")
            tid = pid + 410
            Q = f"{h}:{pid}:{tid} [{g}]"
            out += [f"{Q} NCCL INFO NCCL_IB_GID_INDEX set by environment to 3.",
                    f"{Q} NCCL INFO NCCL_IB_TC set by environment to 106.",
                    f"{Q} NCCL INFO NET/IB : Using [0]mlx5_bond_0:1/RoCE [RO]; OOB bond0:{IPS[n]}<0>",
                    f"{Q} NCCL INFO Using non-device net plugin version 0",
                    f"{Q} NCCL INFO Using network IB",
                    f"{Q} NCCL INFO comm 0x5581c3a0e2f0 rank {r} nranks 16 cudaDev {g} nvmlDev {g} busId {['18000','2a000','9a000','ab000'][g]} commId 0x7c51a3f09e6b2d14 - Init START",
                    f"{Q} NCCL INFO Setting affinity for GPU {g} to ffffffff,00000000,ffffffff",
                    f"{Q} NCCL INFO comm 0x5581c3a0e2f0 rank {r} nranks 16 cudaDev {g} nvmlDev {g} busId {['18000','2a000','9a000','ab000'][g]} commId 0x7c51a3f09e6b2d14 - Init COMPLETE"]
            err.append("/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create 12 worker processes in total. Our suggested max number of worker in current system is 10, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.")
            err.append("  warnings.warn(_create_warning_msg(")
            if r == 0:
                out.append(f"[hvd] size=16 local_size={GPN} cross_size=4 nccl_built=True mpi_threads_supported=True")
                out.append(f"=> resuming from /mnt/ckpt/vit-h-hvd/step_0014000.pt (step 14000)")
                for s in range(14001, LAST_OK + 1):
                    if s % 4 == 0 or s == LAST_OK:
                        loss = 2.31 - (s - 14000) * 0.00011 + rnd.uniform(-0.03, 0.03)
                        out.append(f"step {s:6d} | loss {loss:.4f} | lr 3.12e-04 | {rnd.uniform(1518, 1546):.1f} img/s | {STEP_S + rnd.uniform(-0.02, 0.02):.3f} s/it")
                    if s == 14150:
                        err.append("WARNING:urllib3.connectionpool:Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f3a1c2e9b50>: Failed to establish a new connection: [Errno 111] Connection refused')': /api/2.0/mlflow/runs/log-batch")
            # the fault
            prog = pid + 433
            R = f"{h}:{pid}:{prog} [{g}]"
            if n == BAD:
                peers = [1, 3] if g % 2 else [3, 1]
                for k, pn in enumerate(peers):
                    line = (f"{R} transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {IPS[pn]}<{47100 + 13 * g + k}> "
                            f"with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:{IPS[n]} remoteGids::ffff:{IPS[pn]}")
                    out.append(Ind(line) if (g == 1 and k == 0) else line)
                    out += [f"{R} NCCL INFO transport/net.cc:1302 -> 6", f"{R} NCCL INFO proxy.cc:698 -> 6",
                            f"{R} NCCL INFO proxy.cc:878 -> 6 [Progress Thread]", ""]
            elif g in (1, 2):
                out.append(f"{R} transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {IPS[BAD]}<{47200 + 7 * n + g}> "
                           f"with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:{IPS[n]} remoteGids::ffff:{IPS[BAD]}")
                out += [f"{R} NCCL INFO transport/net.cc:1302 -> 6", f"{R} NCCL INFO proxy.cc:698 -> 6",
                        f"{R} NCCL INFO proxy.cc:878 -> 6 [Progress Thread]", ""]
            else:
                out.append(f"{R} misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer {HOSTS[BAD]}<{51000 + 7 * g}>")
                out.append(f"{R} NCCL INFO misc/socket.cc:752 -> 6")
            err += ["Traceback (most recent call last):",
                    '  File "/usr/local/lib/python3.10/dist-packages/horovod/torch/mpi_ops.py", line 1246, in synchronize',
                    "    mpi_lib.horovod_torch_wait_and_clear(handle)"]
            msg = ("ncclAllReduce failed: remote process exited or there was a network error" if n != BAD
                   else "ncclAllReduce failed: unhandled system error (run with NCCL_DEBUG=INFO for details)")
            err += [f"RuntimeError: {msg}", "", "During handling of the above exception, another exception occurred:", "",
                    "Traceback (most recent call last):",
                    '  File "/workspace/vit/train_hvd.py", line 241, in <module>', "    main()",
                    '  File "/workspace/vit/train_hvd.py", line 214, in main', "    optimizer.step()",
                    '  File "/usr/local/lib/python3.10/dist-packages/horovod/torch/optimizer.py", line 269, in step', "    self.synchronize()",
                    '  File "/usr/local/lib/python3.10/dist-packages/horovod/torch/optimizer.py", line 231, in synchronize', "    output = synchronize(handle)",
                    '  File "/usr/local/lib/python3.10/dist-packages/horovod/torch/mpi_ops.py", line 1251, in synchronize',
                    "    raise HorovodInternalError(e)",
                    f"horovod.common.exceptions.HorovodInternalError: {msg}"]
            b.write(f"logs/{h}/1/rank.{r}/stdout", out)
            b.write(f"logs/{h}/1/rank.{r}/stderr", err)
    b.write(f"logs/{HOSTS[0]}/mpirun.console.log", [
        "Warning: Permanently added 'roce-gpu-02,10.44.2.12' (ECDSA) to the list of known hosts.",
        "--------------------------------------------------------------------------",
        "Primary job  terminated normally, but 1 process returned",
        "a non-zero exit code. Per user-direction, the job has been aborted.",
        "--------------------------------------------------------------------------",
        "--------------------------------------------------------------------------",
        "mpirun detected that one or more processes exited with non-zero status, thus causing",
        "the job to be terminated. The first process to do so was:", "",
        "  Process name: [[30412,1],9]", "  Exit code:    1",
        "--------------------------------------------------------------------------"])
    # probes
    for n, h in enumerate(HOSTS):
        bad = n == BAD
        ib = []
        for ca, pci in (("mlx5_bond_0", "41"),):
            ib += [f"CA '{ca}'", "\tCA type: MT4129", "\tNumber of ports: 1", "\tFirmware version: 28.39.2048",
                   "\tHardware version: 0", f"\tNode GUID: 0xa088c20300{pci}7{n}e0", f"\tSystem image GUID: 0xa088c20300{pci}7{n}e0",
                   "\tPort 1:", "\t\tState: Active", "\t\tPhysical state: LinkUp", "\t\tRate: 400", "\t\tBase lid: 0", "\t\tLMC: 0",
                   "\t\tSM lid: 0", "\t\tCapability mask: 0x00010000", "\t\tPort GUID: 0xa288c2fffe3b7d1" + str(n), "\t\tLink layer: Ethernet"]
        b.write(f"probes/{h}/ibstat.txt", ib)
        c = dict(rx_write_requests=81234411 + n, rx_read_requests=1204, rx_atomic_requests=0, out_of_buffer=0,
                 out_of_sequence=(48211 if bad else rnd.randint(0, 3)), duplicate_request=(3120 if bad else 0),
                 rnr_nak_retry_err=0, packet_seq_err=(9932 if bad else 0), implied_nak_seq_err=(211 if bad else 0),
                 local_ack_timeout_err=(1877 if bad else 0), resp_local_length_error=0, resp_cqe_error=(64 if bad else 0),
                 req_cqe_error=(71 if bad else 0), req_remote_invalid_request=0, req_remote_access_errors=0,
                 resp_remote_access_errors=0, resp_cqe_flush_error=(1203 if bad else 0), req_cqe_flush_error=(988 if bad else 0),
                 roce_adp_retrans=(2216 if bad else 0), roce_adp_retrans_to=(1877 if bad else 0), roce_slow_restart=(14 if bad else 0),
                 rp_cnp_handled=(88112 if bad else rnd.randint(300, 900)), np_ecn_marked_roce_packets=(412877 if bad else rnd.randint(200, 700)))
        stat = "link mlx5_bond_0/1 " + " ".join(f"{k} {v}" for k, v in c.items())
        b.write(f"probes/{h}/rdma-statistic.txt", ["$ rdma statistic show link mlx5_bond_0/1", Ind(stat) if bad else stat])
        eth = ["$ ethtool -S ens1f0np0 | egrep 'discard|pause|prio3|out_of|err'"]
        vals = [("rx_out_of_buffer", 0), ("rx_discards_phy", 1184233 if bad else 0), ("tx_discards_phy", 0),
                ("rx_prio3_pause", 0), ("tx_prio3_pause", 4418 if bad else 12), ("rx_prio3_discards", 1184117 if bad else 0),
                ("rx_pause_ctrl_phy", 0), ("tx_pause_ctrl_phy", 0), ("rx_crc_errors_phy", 0), ("rx_symbol_err_phy", 0)]
        for k, v in vals:
            l = f"     {k}: {v}"
            eth.append(Ind(l) if (bad and k == "rx_prio3_discards") else l)
        b.write(f"probes/{h}/ethtool-S.txt", eth)
    b.job(f"""
job_id: "hvd-30412"
name: vit-h-14-pretrain-hvd
framework: other
launcher: "mpirun -np 16 -H roce-gpu-01:4,roce-gpu-02:4,roce-gpu-03:4,roce-gpu-04:4 --output-filename /mnt/logs/hvd-30412 -x NCCL_IB_GID_INDEX=3 -x NCCL_IB_TC=106 python train_hvd.py"
status: failed
started_at: 2026-11-27T{hms(T0)}Z
ended_at: 2026-11-27T{hms(t_fault + 6)}Z
exit_code: 1
gpus_per_node: {GPN}
parallelism: {{tp: 1, pp: 1, dp: 16, cp: 1, ep: 1}}
nodes:
""" + "".join(f"  - {{host: {h}, ip: {IPS[i]}, ranks: [{', '.join(str(i * GPN + g) for g in range(GPN))}]}}\n" for i, h in enumerate(HOSTS)) + """code:
  - {commit: 5e0d7a2, at: 2026-11-18T15:20:00Z, message: "hvd: fp16 compression for allreduce"}
  - {commit: b1c93f4, at: 2026-11-22T09:02:00Z, message: "augment: randaug magnitude 9"}
checkpoints:
  - {step: 13000, at: 2026-11-26T22:15:40Z, path: /mnt/ckpt/vit-h-hvd/step_0013000.pt, valid: true}
  - {step: 14000, at: 2026-11-27T01:44:02Z, path: /mnt/ckpt/vit-h-hvd/step_0014000.pt, valid: true}
spares: 1
network: RoCEv2 (ConnectX-7 bonded, mlx5_bond_0), PFC on priority 3
""")
    b.truth(fault="roce_cqe_error", category="network",
            root_cause="the bonded RoCE NIC mlx5_bond_0 of roce-gpu-03 drops received RoCE traffic (rx_prio3_discards, local_ack_timeout_err), so its queue pairs end in retry-exceeded completions (status=12); every failing completion on the other nodes names 10.44.2.13",
            faulty_nodes=[HOSTS[BAD]], stage="training", iteration=LAST_OK + 1,
            actions=[{"kind": "evict", "nodes": [HOSTS[BAD]]}, {"kind": "restart", "from_step": 14000}])
    return b
