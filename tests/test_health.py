"""Node health: probe parsers on real-format samples, peer comparisons, verdicts with exact lines, CLI."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

from typer.testing import CliRunner

from diagagent.analysis.health import analyze_health
from diagagent.analysis.probes import (
    parse_dcgm_diag,
    parse_dmesg,
    parse_ibstat,
    parse_json_probe,
    parse_limits,
    parse_nccl_tests,
    parse_nvidia_smi,
    parse_perfquery,
    parse_rdma_link,
    parse_text_probe,
)
from diagagent.analysis.xid import load_xid_catalog
from diagagent.apps.cli import build_app
from diagagent.diagnosis import diagnose
from diagagent.telemetry import Bundle

FIX = Path(__file__).parent / "fixtures" / "probes"


def _line(name: str, n: int) -> str:
    return (FIX / name).read_text().split("\n")[n - 1].strip()


def _kinds(reading) -> dict[str, tuple[int, str]]:
    return {s.kind + (f":{s.code}" if s.code is not None else ""): (s.line, s.severity) for s in reading.signals}


def test_nvidia_smi_h100_ecc_and_remap() -> None:
    r = parse_nvidia_smi((FIX / "nvidia-smi-h100-ecc.txt").read_text(), "f")
    k = _kinds(r)
    assert k["ecc_uncorrectable"] == (114, "fatal")
    assert _line("nvidia-smi-h100-ecc.txt", 114).startswith("DRAM Uncorrectable            : 2")
    assert k["row_remap_pending"][1] == "warning" and "ecc_correctable" not in k  # 12 correctable is normal
    assert "thermal_throttle" not in k  # SW Power Cap alone is normal under load
    assert r.values["gpus"][0] == 2 and r.signals[0].device == "00000000:2A:00.0"


def test_nvidia_smi_a100_throttle_reasons_and_old_ecc_layout() -> None:
    r = parse_nvidia_smi((FIX / "nvidia-smi-a100-throttle.txt").read_text(), "f")
    lines = {(s.kind, s.line, s.severity) for s in r.signals}
    assert ("thermal_throttle", 20, "error") in lines  # HW Thermal Slowdown, not its parent HW Slowdown
    assert not any(s.line == 19 for s in r.signals)
    v = parse_nvidia_smi((FIX / "nvidia-smi-v100-dbe.txt").read_text(), "f")
    k = _kinds(v)
    assert k["ecc_uncorrectable"] == (37, "fatal")  # Volatile / Double Bit / Device Memory
    assert sum(s.kind == "ecc_uncorrectable" for s in v.signals) == 1  # its Total row is not a second signal
    assert k["retired_pages_pending"][0] == 67


def test_nvidia_smi_lost_gpu() -> None:
    r = parse_nvidia_smi((FIX / "nvidia-smi-lost.txt").read_text(), "f")
    assert _kinds(r)["gpu_lost"] == (1, "fatal") and r.values["gpus"][0] == 7


def test_nvidia_smi_notice_of_a_critical_xid() -> None:
    r = parse_nvidia_smi("GPU 00000000:3B:00.0: Detected Critical Xid Error\n", "f")
    assert _kinds(r)["xid"] == (1, "fatal") and r.signals[0].line == 1


def test_a_driver_whose_libraries_and_module_disagree_is_a_signal_in_nvidia_smi_and_dmesg() -> None:
    # the NVIDIA libraries upgraded under a loaded module: nvidia-smi's and NVRM's documented words
    smi = parse_nvidia_smi("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.127\n",
                           "f")
    assert _kinds(smi)["driver_mismatch"] == (1, "error") and smi.signals[0].line == 1
    dmesg = parse_dmesg("[Fri Nov 27 04:58:03 2026] NVRM: API mismatch: the client has the version 550.127.05, but\n"
                        "[Fri Nov 27 04:58:03 2026] NVRM: this kernel module has the version 550.90.07.  Please\n",
                        "f", load_xid_catalog())
    assert _kinds(dmesg)["driver_mismatch"] == (1, "error")


def test_dcgm_diag_v3_and_v4_tables() -> None:
    v3 = parse_dcgm_diag((FIX / "dcgm-diag-r2-fail.txt").read_text(), "f")
    assert [(s.line, s.device) for s in v3.signals] == [(16, None), (25, "3")]
    assert "GPU Memory" in v3.signals[1].meaning and "DCGM_FR_CUDA_API" in v3.signals[1].meaning
    v4 = parse_dcgm_diag((FIX / "dcgm-diag-v4-fail.txt").read_text(), "f")
    assert [(s.line, s.device) for s in v4.signals] == [(16, "2")]
    assert "DCGM_FR_VOLATILE_DBE_DETECTED" in v4.signals[0].meaning
    assert parse_dcgm_diag((FIX / "dcgm-diag-pass.txt").read_text(), "f").signals == []


def test_a_dcgm_failure_is_weighed_by_the_reason_dcgm_printed(tmp_path: Path) -> None:
    """A DCGM table's 'Fail' row says which test failed; the warning under it says why, and the signatures read that:
    'Detected 2 volatile double-bit ECC error(s)' is an uncorrectable ECC error on that node's GPU (incident
    impi-deepspeed-dcgm-ecc-3node, where CUDA's 'unspecified launch failure' on its rank says only that a kernel
    faulted)."""
    root = tmp_path / "b"
    for host in ("n0", "n1"):
        (root / "logs" / host).mkdir(parents=True)
        (root / "logs" / host / "rank.log").write_text("[13] RuntimeError: CUDA error: unspecified launch failure\n"
                                                       if host == "n1" else "step 10 loss 2.0\n")
    (root / "probes" / "n1").mkdir(parents=True)
    shutil.copy(FIX / "dcgm-diag-v4-fail.txt", root / "probes" / "n1" / "dcgm-diag.txt")
    (root / "job.yaml").write_text('job_id: "6"\nstatus: failed\nnodes:\n  - {host: n0}\n  - {host: n1}\n')
    with Bundle.open(root) as b:
        d = diagnose(b)
    assert (d.fault, d.faulty_hosts) == ("gpu_ecc_uncorrectable", ["n1"])
    assert ("probes/n1/dcgm-diag.txt", 16) in [(e.file, e.line) for e in d.evidence if e.role == "cause"]


def test_a_name_dig_cannot_resolve_explains_the_rendezvous_that_timed_out(tmp_path: Path) -> None:
    """dig's NXDOMAIN header on a node is read as a hint line of its probe, and a rendezvous that timed out while
    c10d could not resolve the master's name is that name's failure, not the rendezvous' (incident
    deepspeed-relsec-dns-master-two-nodes)."""
    dig = (";; Got answer:\n;; ->>HEADER<<- opcode: QUERY, status: NXDOMAIN, id: 24608\n"
           ";; flags: qr rd ra ad; QUERY: 1, ANSWER: 0, AUTHORITY: 1, ADDITIONAL: 1\n")
    assert [(x.line, x.kind) for x in parse_text_probe(dig, "f", "dig").signals] == [(2, "text_probe")]
    root = tmp_path / "b"
    for host in ("n0", "n1"):
        (root / "logs" / host).mkdir(parents=True)
    (root / "logs" / "n0" / "node.log").write_text(
        "[rank0]: torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 8/16 clients "
        "joined.\n")
    (root / "logs" / "n1" / "node.log").write_text(
        "[W1125 08:30:10.618290694 socket.cpp:752] [c10d] The IPv4 network addresses of (train-master, 29500) cannot "
        "be retrieved (gai error: -2 - Name or service not known).\n")
    (root / "probes" / "n1").mkdir(parents=True)
    (root / "probes" / "n1" / "dig.txt").write_text(dig)
    (root / "job.yaml").write_text('job_id: "7"\nstatus: failed\nnodes:\n  - {host: n0}\n  - {host: n1}\n')
    with Bundle.open(root) as b:
        d = diagnose(b)
    assert d.fault == "dns_resolution_failure"
    assert ("probes/n1/dig.txt", 2) in [(e.file, e.line) for e in d.evidence if e.role == "cause"]


def test_dmesg_xid_catalog_aer_oom_panic_links() -> None:
    r = parse_dmesg((FIX / "dmesg.txt").read_text(), "f", load_xid_catalog())
    k = _kinds(r)
    assert k["xid:48"] == (8, "fatal") and k["xid:79"] == (12, "fatal") and k["xid:74"] == (11, "fatal")
    assert k["xid:94"] == (10, "error") and k["xid:63"][1] == "warning" and k["xid:45"][1] == "info"
    x79 = next(s for s in r.signals if s.code == 79)
    assert x79.count == 2 and "RESTART_BM" in x79.action and x79.device == "0000:db:00"
    assert "gpu_lost" not in k  # the driver's second line about the same Xid 79
    assert k["pcie_aer_fatal"] == (16, "fatal") and k["pcie_aer_corrected"][1] == "info"
    assert k["oom_kill"] == (26, "error") and k["oom_invoked"][1] == "info"
    assert k["kernel_panic"] == (28, "fatal") and k["nic_link_down"] == (21, "error")
    assert x79.text == _line("dmesg.txt", 12)


def test_dmesg_driver_messages_without_an_xid() -> None:
    """NVRM's own words, as open-gpu-kernel-modules prints them: a message over three lines (dmesg indents the lines
    after the first), its NV_ERR_ status, the older GSP timeout, and other failed calls counted as aftermath."""
    fell = ("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
            "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
            "               NVRM: fallen off the bus and is not responding to commands.\n"
            "[ 1843.310000] nvidia: probe of 0000:b3:00.0 failed with error -1\n"
            "[ 1843.320000] NVRM: The NVIDIA probe routine failed for 1 device(s).\n")
    r = parse_dmesg(fell, "f", load_xid_catalog())
    assert [(s.kind, s.line, s.end_line, s.severity, s.count) for s in r.signals] == [("gpu_lost", 1, 3, "fatal", 2)]
    assert "installed in this system has NVRM: fallen off the bus" in r.signals[0].text
    lost = parse_dmesg("[ 200.2] NVRM: nvCheckOkFailedNoLog: Check failed: GPU lost from the bus "
                       "[NV_ERR_GPU_IS_LOST] (0x0000000F)\n", "f", load_xid_catalog())
    assert _kinds(lost) == {"gpu_lost": (1, "fatal")}
    gsp = parse_dmesg("[  113.669] NVRM: GPU at PCI:0000:00:06: GPU-fcdeaa4c\n"
                      "[  113.670] NVRM: GPU0 GSP RPC buffer contains function 76 (GSP_RM_CONTROL) and data 0x0 0x0.\n"
                      "[  114.000] NVRM: rpcRmApiControl_GSP: GspRmControl failed: cmd=0x20800a4c; status=0x65\n",
                      "f", load_xid_catalog())
    assert [(s.kind, s.line, s.count) for s in gsp.signals] == [("gsp_timeout", 2, 2)]
    assert _kinds(parse_dmesg("[ 5.0] NVRM: Timeout waiting for RPC from GSP! Expected function 10 (FREE)\n", "f",
                              load_xid_catalog())) == {"gsp_timeout": (1, "fatal")}
    # a GSP timeout after another GPU's fatal Xid is its aftermath; the driver's echo of RmInitAdapter is no signal
    after = parse_dmesg("[ 1.0] NVRM: Xid (PCI:0000:48:00): 74, pid=1, name=x, NVLink: fatal error detected on link 8\n"
                        "[ 91.0] NVRM: _kgspLogXid119: ********** GSP Timeout **********\n"
                        "[ 92.0] NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 1\n",
                        "f", load_xid_catalog())
    assert [(s.kind, s.code, s.count) for s in after.signals] == [("xid", 74, 2)]
    # a line indented like a continuation but stamped is its own message
    stamped = parse_dmesg("[ 1.0] NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n"
                          "    [ 2.0] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x62:0x65:1598)\n", "f",
                          load_xid_catalog())
    assert [(s.kind, s.line, s.end_line) for s in stamped.signals] == [("gpu_driver_error", 2, None)]
    # an RDMA NIC driver's failed firmware command (mlx5_core's cmd.c); its boot lines are no signal
    nic = parse_dmesg("[ 10.0] mlx5_core 0000:3b:00.0: firmware version: 28.39.2048\n"
                      "[ 99.0] mlx5_core 0000:3b:00.0: mlx5_cmd_out_err:838:(pid 1234): CREATE_QP(0x500) op_mod(0x0) "
                      "failed, status bad parameter(0x3), syndrome (0x1234), err(-22)\n", "f", load_xid_catalog())
    assert [(s.kind, s.line, s.severity) for s in nic.signals] == [("nic_driver_error", 2, "error")]
    # a work completion in error says the remote side did not answer: this node noticed, a peer or the fabric broke
    cqe = parse_dmesg("[ 99.0] infiniband mlx5_1: mlx5_handle_error_cqe:332:(pid 0): WC error: 12, Message: transport "
                      "retry counter exceeded\n[ 99.0] infiniband mlx5_1: dump_cqe:272:(pid 0): dump error cqe\n",
                      "f", load_xid_catalog())
    assert {(s.kind, s.severity) for s in cqe.signals} == {("rdma_completion_error", "warning")}


def test_a_hung_task_is_placed_in_the_module_it_waits_in() -> None:
    """The hung-task report, then its call trace: the first frame in a module (not a '?' guess) says where the task
    waits (GPFS's client, as Hugging Face's m4-logs printed it, dev:m4-logs-tr141-try3)."""
    hung = parse_dmesg("[Sat Mar  4 04:10:52 2023] INFO: task python:280058 blocked for more than 120 seconds.\n"
                       "[Sat Mar  4 04:10:52 2023] Call Trace:\n"
                       "[Sat Mar  4 04:10:52 2023]  __schedule+0x2d1/0x860\n"
                       "[Sat Mar  4 04:10:52 2023]  ? cxiBlockingMutexRelease+0xdc/0xe0 [mmfslinux]\n"
                       "[Sat Mar  4 04:10:52 2023]  cxiWaitEventWait+0x208/0x330 [mmfslinux]\n", "f", load_xid_catalog())
    where = [s for s in hung.signals if s.kind == "hung_task_module"]
    assert [(s.line, s.severity) for s in where] == [(5, "error")] and "mmfslinux" in where[0].meaning
    assert not [s for s in parse_dmesg("[ 1.0]  cxiWaitEventWait+0x208/0x330 [mmfslinux]\n", "f",
                                       load_xid_catalog()).signals]  # a frame with no hung task is nothing


def test_dmesg_amdgpu_page_fault_ras_and_failed_reset() -> None:
    """The amdgpu driver's own words (gmc_v9_0.c, amdgpu_ras.c, amdgpu_device.c): a page fault the GPU cannot retry is
    the application's illegal access (a warning, as Xid 31: not a faulty node); a retry fault is none; an uncorrectable
    RAS error is, and so is a reset of a GPU that failed (once a GPU)."""
    fault = parse_dmesg("[19277.97] amdgpu 0000:3d:00.0: amdgpu: [mmhub0] retry page fault (src_id:0 ring:0 vmid:3 "
                        "pasid:32790)\n"
                        "[19277.98] amdgpu 0000:3d:00.0: amdgpu: [mmhub0] no-retry page fault (src_id:0 ring:160 vmid:3 "
                        "pasid:32790)\n", "f", load_xid_catalog())
    assert [(s.kind, s.line, s.severity) for s in fault.signals] == [("gpu_page_fault", 2, "warning")]
    ras = parse_dmesg("[ 50.0] amdgpu 0000:05:00.0: amdgpu: socket: 0, die: 1, 2 new uncorrectable hardware errors "
                      "detected in UMC block\n[ 50.1] amdgpu 0000:05:00.0: amdgpu: 0 uncorrectable hardware errors "
                      "detected in GFX block\n", "f", load_xid_catalog())
    assert [(s.kind, s.line, s.severity) for s in ras.signals] == [("gpu_ras_uncorrectable", 1, "fatal")]
    assert "UMC block" in ras.signals[0].meaning and "ECC" in ras.signals[0].meaning
    reset = parse_dmesg("[22344.29] amdgpu 0000:03:00.0: amdgpu: GPU mode1 reset failed\n"
                        "[22344.45] amdgpu 0000:83:00.0: amdgpu: ASIC reset failed with error, -121 for drm dev, "
                        "0000:83:00.0\n[22344.49] amdgpu 0000:03:00.0: amdgpu: ASIC reset failed with error, -121 for drm "
                        "dev, 0000:03:00.0\n[22348.74] amdgpu 0000:83:00.0: amdgpu: GPU reset succeeded, trying to "
                        "resume\n", "f", load_xid_catalog())  # (dev:legacy-rocm-build-2494: one failed reset a GPU)
    assert [(s.kind, s.line, s.device, s.severity) for s in reset.signals] == [
        ("gpu_reset_failed", 1, "0000:03:00.0", "fatal"), ("gpu_reset_failed", 2, "0000:83:00.0", "fatal")]


def test_ibstat_perfquery_nccl_json() -> None:
    ports = parse_ibstat((FIX / "ibstat-down.txt").read_text())
    assert [(p.name, p.state, p.physical, p.rate) for p in ports] == [
        ("mlx5_0/1", "Active", "LinkUp", 400.0), ("mlx5_1/1", "Down", "Polling", 10.0)]
    assert ports[1].state_line == 26
    counters = {c.name: (c.value, c.line) for c in parse_perfquery((FIX / "perfquery.txt").read_text())}
    assert counters["LinkDownedCounter"] == (6, 6) and counters["PortXmitWait"] == (1024, 22)
    new = parse_nccl_tests((FIX / "nccl-tests-allreduce.txt").read_text(), "f")
    assert new.values["avg_busbw"][:2] == (157.372, 22) and new.values["max_busbw"][:2] == (423.91, 20)
    old = parse_nccl_tests((FIX / "nccl-tests-v2-old.txt").read_text(), "f")
    assert old.values["avg_busbw"][0] == 50.3333 and old.values["max_busbw"][0] == 120.93
    j = parse_json_probe((FIX / "gpu-burn.json").read_text(), "f", "gpu-burn")
    assert j.signals[0].kind == "probe_fail" and j.values["metric:errors"][0] == 12
    # the line cited is what the probe found, its detail, where the JSON is laid out a key a line
    laid_out = parse_json_probe('{\n  "probe": "lfs quota",\n  "status": "fail",\n  "detail": "/lustre: 100% of the '
                                'hard limit"\n}', "f", "lfs")
    assert laid_out.signals[0].line == 4
    assert laid_out.signals[0].text.strip() == '"detail": "/lustre: 100% of the hard limit"'


def test_rdma_link_reads_each_port_and_a_port_that_went_down_and_came_back_is_a_flap(tmp_path: Path) -> None:
    """iproute2's `rdma link` in its two layouts; one port read three times, Down then Active (dev:rccl-1423), is a
    flapping link on its node, each Down reading cited; a port that is Down when last read is down."""
    ib = "link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0 state {s} physical_state {p}\n"
    old = "0/1: mlx5_0/1: state DOWN physical_state DISABLED \n2/1: mlx5_2/1: state ACTIVE physical_state LINK_UP \n"
    assert [(p.name, p.state, p.physical, p.link_layer, p.state_line) for p in parse_rdma_link(
        ib.format(s="DOWN", p="POLLING") + "link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens6f0np0\n")] == [
        ("mlx5_7/1", "Down", "POLLING", "InfiniBand", 1), ("mlx5_0/1", "Active", "LINK_UP", "Ethernet", 2)]
    assert [(p.name, p.state) for p in parse_rdma_link(old)] == [("mlx5_0/1", "Down"), ("mlx5_2/1", "Active")]
    root = tmp_path / "b"
    (root / "probes" / "n0").mkdir(parents=True)
    (root / "probes" / "n1").mkdir(parents=True)
    (root / "job.yaml").write_text('job_id: "3"\nstatus: hung\nnodes:\n  - {host: n0}\n  - {host: n1}\n')
    (root / "probes" / "n0" / "rdma_link.txt").write_text(
        ib.format(s="DOWN", p="POLLING") + ib.format(s="DOWN", p="LINK_UP") + ib.format(s="ACTIVE", p="LINK_UP"))
    (root / "probes" / "n1" / "rdma_link.txt").write_text(ib.format(s="ACTIVE", p="LINK_UP"))
    with Bundle.open(root) as b:
        f = analyze_health(b)
        d = diagnose(b)
    n0, n1 = f.node("n0"), f.node("n1")
    assert n0 is not None and n1 is not None and n0.verdict == "faulty" and n1.verdict == "healthy"
    assert [(s.kind, s.line) for s in n0.signals] == [("ib_port_flapped", 1), ("ib_port_flapped", 2)]
    assert "read 3 times, Down (POLLING), then Down (LINK_UP), then Active (LINK_UP)" in n0.signals[0].meaning
    assert d.fault == "ib_link_flap" and d.faulty_hosts[:1] == ["n0"]
    assert [(e.file, e.line) for e in d.evidence if e.role == "cause"][:2] == [
        ("probes/n0/rdma_link.txt", 1), ("probes/n0/rdma_link.txt", 2)]
    (root / "probes" / "n0" / "rdma_link.txt").write_text(ib.format(s="ACTIVE", p="LINK_UP") + ib.format(s="DOWN",
                                                                                                      p="POLLING"))
    with Bundle.open(root) as b:
        down = analyze_health(b).node("n0")
    assert down is not None and [(s.kind, s.line) for s in down.signals] == [("ib_port_down", 2)]


def test_a_memlock_limit_below_the_peers_is_the_nodes_and_names_it_for_an_rdma_registration_failure(
        tmp_path: Path) -> None:
    """`ulimit -a` in bash's layout and /proc/<pid>/limits in the kernel's: the node whose memlock limit is below the
    others' is faulty, its limit line cited, and with NCCL's 'ibv_reg_mr failed' it is the node the memlock fault is
    on (blind incident verl-ray-memlock-ibv-reg-mr); nodes with one limit say nothing."""
    bash = "core file size              (blocks, -c) 0\nmax locked memory           (kbytes, -l) {v}\nopen files (-n) 1048576\n"
    proc = "Limit                     Soft Limit           Hard Limit           Units\nMax locked memory         {v}  {v}  bytes\n"
    assert parse_limits(bash.format(v=64), "f").values["memlock_bytes"][:2] == (65536.0, 2)
    assert parse_limits(bash.format(v="unlimited"), "f").values["memlock_bytes"][0] == math.inf
    assert parse_limits(proc.format(v=8388608), "f").values["memlock_bytes"][:2] == (8388608.0, 2)
    assert parse_limits(bash.format(v="lots"), "f").skipped == 1
    root = tmp_path / "b"
    for host in ("n0", "n1", "n2"):
        (root / "probes" / host).mkdir(parents=True)
        (root / "logs" / host).mkdir(parents=True)
        (root / "logs" / host / "rank.log").write_text(f"{host}:311:900 [0] NCCL INFO Bootstrap : Using eth0\n")
    (root / "job.yaml").write_text('job_id: "4"\nstatus: failed\nnodes:\n  - {host: n0}\n  - {host: n1}\n'
                                   '  - {host: n2}\n')
    (root / "probes" / "n0" / "ulimit.txt").write_text(bash.format(v="unlimited"))
    (root / "probes" / "n1" / "ulimit.txt").write_text(bash.format(v=64))
    (root / "probes" / "n2" / "limits").write_text(proc.format(v="unlimited"))
    (root / "logs" / "n1" / "rank.log").write_text(
        "n1:311:900 [0] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate "
        "memory\n")
    with Bundle.open(root) as b:
        f = analyze_health(b)
        d = diagnose(b)
    assert [(n.host, n.verdict) for n in sorted(f.nodes, key=lambda n: n.host)] == [
        ("n0", "healthy"), ("n1", "faulty"), ("n2", "healthy")]
    n1 = f.node("n1")
    assert n1 is not None and [(s.kind, s.line, s.meaning) for s in n1.signals] == [
        ("memlock_below_peers", 2, "max locked memory 64 kB below its peers' unlimited")]
    assert d.fault == "rdma_memlock_limit" and d.faulty_hosts == ["n1"]
    assert ("probes/n1/ulimit.txt", 2) in [(e.file, e.line) for e in d.evidence if e.role == "cause"]
    (root / "probes" / "n1" / "ulimit.txt").write_text(bash.format(v="unlimited"))
    with Bundle.open(root) as b:
        assert all(n.verdict == "healthy" for n in analyze_health(b).nodes)


def test_a_gpu_driver_unlike_most_peers_is_the_nodes_and_names_it_for_a_driver_mismatch(tmp_path: Path) -> None:
    """nvidia-smi -q's Driver Version compared across nodes: the one node of four on another version is faulty, its
    line cited, and with CUDA's 'driver version is insufficient' it is the node evicted (blind incident
    sbatch-slurmout-nemo-old-driver-one-node-4node); two nodes on two versions tell no odd one."""
    smi = "==============NVSMI LOG==============\n\nDriver Version                            : {v}\n" \
          "CUDA Version                              : 12.4\n\nAttached GPUs                             : 8\n"
    assert parse_nvidia_smi(smi.format(v="550.127.08"), "f").values["driver"][:2] == (550.127, 3)
    root = tmp_path / "b"
    hosts = ("n0", "n1", "n2", "n3")
    for host in hosts:
        (root / "probes" / host).mkdir(parents=True)
        (root / "probes" / host / "nvidia-smi.txt").write_text(smi.format(v="450.248.02" if host == "n2" else
                                                                          "550.127.08"))
    (root / "logs" / "n0").mkdir(parents=True)
    (root / "logs" / "n0" / "slurm.out").write_text(
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n")
    (root / "job.yaml").write_text('job_id: "5"\nstatus: failed\nnodes:\n' + "".join(f"  - {{host: {h}}}\n"
                                                                                    for h in hosts))
    with Bundle.open(root) as b:
        f = analyze_health(b)
        d = diagnose(b)
    n2 = f.node("n2")
    assert n2 is not None and n2.verdict == "faulty" and [(s.kind, s.line, s.meaning) for s in n2.signals] == [
        ("driver_unlike_peers", 3, "driver 450.248.02 where 3 of 4 nodes run 550.127.08")]
    assert [n.host for n in f.nodes if n.verdict != "healthy"] == ["n2"]
    assert d.fault == "cuda_driver_mismatch" and d.faulty_hosts == ["n2"]
    assert [(p.kind, p.nodes) for p in d.proposals if p.kind == "evict"] == [("evict", ["n2"])]
    shutil.rmtree(root / "probes" / "n0")
    shutil.rmtree(root / "probes" / "n1")
    with Bundle.open(root) as b:
        assert all(n.verdict == "healthy" for n in analyze_health(b).nodes)


def _probe_bundle(root: Path) -> Path:
    hosts = [f"node-00{i}" for i in range(1, 6)]
    (root).mkdir(parents=True)
    (root / "job.yaml").write_text('job_id: "9"\ngpus_per_node: 8\nnodes:\n' +
                                   "".join(f"  - {{host: {h}}}\n" for h in hosts))
    healthy_smi = (FIX / "nvidia-smi-h100-ecc.txt").read_text().replace("DRAM Uncorrectable            : 2",
                                                                        "DRAM Uncorrectable            : 0")
    healthy_smi = healthy_smi.replace("Attached GPUs                             : 2", "Attached GPUs                             : 8")
    healthy_smi = healthy_smi.replace("Pending                           : Yes", "Pending                           : No")
    healthy_smi = healthy_smi.replace("Uncorrectable Error               : 1", "Uncorrectable Error               : 0")
    quiet_pq = "\n".join(ln if ":." not in ln or "Port" in ln and "Data" in ln else ln.rsplit(".", 1)[0] + ".0"
                         for ln in (FIX / "perfquery.txt").read_text().split("\n"))
    for i, h in enumerate(hosts):
        d = root / "probes" / h
        d.mkdir(parents=True)
        (d / "nvidia-smi.txt").write_text(healthy_smi)
        (d / "ibstat.txt").write_text((FIX / "ibstat-ok.txt").read_text())
        (d / "ib-counters.txt").write_text(quiet_pq)
        busbw = (FIX / "nccl-tests-allreduce.txt").read_text()
        (d / "nccl-tests.txt").write_text(busbw.replace("157.372", str(157.0 + i)))
        (d / "dmesg.txt").write_text("[Fri Nov 20 10:04:10 2026] NVRM: Xid (PCI:0000:3b:00): 45, pid=1, name=python3, "
                                     "Ch 00000008\n")
    bad = root / "probes" / "node-003"
    shutil.copy(FIX / "ibstat-down.txt", bad / "ibstat.txt")
    shutil.copy(FIX / "perfquery.txt", bad / "ib-counters.txt")
    (bad / "nccl-tests.txt").write_text((FIX / "nccl-tests-allreduce.txt").read_text().replace("157.372", "41.5"))
    shutil.copy(FIX / "nvidia-smi-h100-ecc.txt", root / "probes" / "node-005" / "nvidia-smi.txt")
    shutil.copy(FIX / "dmesg.txt", root / "probes" / "node-005" / "dmesg.txt")
    return root


def test_verdicts_with_peers(tmp_path: Path) -> None:
    root = _probe_bundle(tmp_path / "b")
    with Bundle.open(root) as b:
        f = analyze_health(b)
    verdicts = {n.host: n.verdict for n in f.nodes}
    assert verdicts == {"node-001": "healthy", "node-002": "healthy", "node-003": "faulty", "node-004": "healthy",
                        "node-005": "faulty"}
    n3 = f.node("node-003")
    assert n3 is not None
    kinds = {s.kind: s for s in n3.signals}
    assert kinds["ib_port_down"].line == 26 and kinds["ib_port_down"].text == "State: Down"
    assert kinds["low_busbw"].line == 22 and kinds["low_busbw"].severity == "error"
    assert kinds["ib_link_downed"].line == 6 and kinds["ib_congestion"].line == 22
    assert kinds["ib_symbol_errors"].severity == "warning"
    n5 = f.node("node-005")
    assert n5 is not None and n5.signals[0].severity == "fatal"
    assert {"ecc_uncorrectable", "gpu_missing", "xid"} <= {s.kind for s in n5.signals}
    assert {s.host for s in f.suspects} == {"node-003", "node-005"}
    assert f.peer_baselines["nccl_busbw_median"] > 150


def test_throttle_on_one_node_is_faulty_not_on_many(tmp_path: Path) -> None:
    root = tmp_path / "b"
    hosts = [f"n{i}" for i in range(4)]
    root.mkdir()
    (root / "job.yaml").write_text('job_id: "3"\ngpus_per_node: 1\nnodes:\n' + "".join(f"  - {{host: {h}}}\n" for h in hosts))
    sw_only = (FIX / "nvidia-smi-a100-throttle.txt").read_text().replace(
        "HW Slowdown                       : Active", "HW Slowdown                       : Not Active").replace(
        "HW Thermal Slowdown           : Active", "HW Thermal Slowdown           : Not Active")
    calm = sw_only.replace("SW Thermal Slowdown               : Active", "SW Thermal Slowdown               : Not Active")
    for h in hosts:
        (root / "probes" / h).mkdir(parents=True)
        (root / "probes" / h / "nvidia-smi.txt").write_text(sw_only if h == "n2" else calm)
    with Bundle.open(root) as b:
        f = analyze_health(b)
    assert f.node("n2").verdict == "faulty" and f.node("n0").verdict == "healthy"  # type: ignore[union-attr]


def test_odd_probe_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text('job_id: "1"\nnodes: [{host: a}]\n')
    (tmp_path / "probes" / "a").mkdir(parents=True)
    (tmp_path / "probes" / "a" / "mystery.txt").write_text("\x00\x01 nothing here\n")  # a command's text: nothing
    (tmp_path / "probes" / "a" / "broken.json").write_text("{not json")
    (tmp_path / "probes" / "loose.txt").write_text("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n")
    with Bundle.open(tmp_path) as b:
        f = analyze_health(b)
    assert f.skipped == 2 and f.node("a").verdict == "healthy"  # type: ignore[union-attr]
    (tmp_path / "probes").rename(tmp_path / "gone")
    with Bundle.open(tmp_path) as b:
        assert not analyze_health(b).present


def test_any_other_command_is_read_for_its_warnings(tmp_path: Path) -> None:
    """A probe of no known kind (`kubectl describe pod`) is read as text: its warning lines are signals for the
    signatures, which never make the node faulty on their own: the eviction decides the fault."""
    root = tmp_path / "b"
    (root / "probes" / "k-2").mkdir(parents=True)
    (root / "job.yaml").write_text('job_id: "7"\nstatus: failed\nnodes: [{host: k-1}, {host: k-2}]\n')
    (root / "probes" / "k-2" / "kubectl-describe-pod.txt").write_text(
        "Name:             llm-pt-worker-1\nStatus:           Failed\nReason:           Evicted\nEvents:\n"
        "  Type     Reason     Age    From               Message\n"
        "  Normal   Started    3h31m  kubelet            Started container pytorch\n"
        "  Warning  Evicted    29m    kubelet            The node was low on resource: ephemeral-storage. Threshold "
        "quantity: 47204280524, available: 45212560Ki.\n")
    with Bundle.open(root) as b:
        f = analyze_health(b)
        assert f.skipped == 0 and f.node("k-2").verdict == "degraded"  # type: ignore[union-attr]
        assert [(s.kind, s.line) for s in f.node("k-2").signals] == [("text_probe", 2), ("text_probe", 7)]  # type: ignore[union-attr]
        d = diagnose(b)
    assert d.fault == "disk_full"
    assert any(e.file == "probes/k-2/kubectl-describe-pod.txt" and e.line == 7 for e in d.evidence)


def test_cli_health(tmp_path: Path) -> None:
    root = _probe_bundle(tmp_path / "b")
    res = CliRunner().invoke(build_app(), ["health", str(root), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["nodes"][0]["verdict"] == "faulty"
    res = CliRunner().invoke(build_app(), ["health", str(root)])
    assert res.exit_code == 0 and "node-003" in res.output and "ib_port_down" in res.output


def test_a_roce_ports_ethtool_counters_single_out_the_node_whose_frames_fail_their_crc(tmp_path: Path) -> None:
    # `ethtool -S` of a ConnectX port (mlx5's documented counter names), beside a peer's quiet one
    counters = "NIC statistics:\n     rx_packets: 912233410421\n     rx_crc_errors_phy: {crc}\n" \
               "     rx_symbol_err_phy: {sym}\n     link_down_events_phy: 0\n"
    root = tmp_path / "b"
    root.mkdir()
    (root / "job.yaml").write_text('job_id: "7"\nstatus: failed\nnodes:\n  - {host: n13}\n  - {host: n14}\n')
    for host, crc, sym in (("n13", 0, 0), ("n14", 1823344, 92211)):
        (root / "probes" / host).mkdir(parents=True)
        (root / "probes" / host / "ethtool-S-bond0.txt").write_text(counters.format(crc=crc, sym=sym))
    with Bundle.open(root) as b:
        f = analyze_health(b)
    n14 = f.node("n14")
    assert n14 is not None and n14.verdict != "healthy" and f.node("n13").verdict == "healthy"
    assert {s.kind: s.line for s in n14.signals}["ib_link_integrity"] == 3


def test_kubernetes_events_that_ended_a_pod_are_signals_though_normal() -> None:
    # `kubectl get events`: the scheduler's preemption is a Normal event; so is nothing else here
    events = ("LAST SEEN   TYPE      REASON      OBJECT            MESSAGE\n"
              "2m10s       Normal    Preempted   pod/workers-0-2   Preempted by pod 8d1f0c53 on node gke-a3m-9hxw\n"
              "2m09s       Normal    Killing     pod/workers-0-2   Stopping container pytorch\n")
    signals = parse_text_probe(events, "probes/n/k8s-events.txt", "k8s-events").signals
    assert [s.line for s in signals] == [2]


def test_load_is_read_from_uptime_top_and_proc_loadavg() -> None:
    from diagagent.analysis.probes import parse_load

    top = parse_load("top - 04:10:59 up 6 days,  3:11,  1 user,  load average: 188.42, 171.07, 96.33\n"
                     "Tasks: 1512 total, 183 running, 1329 sleeping,   0 stopped,   0 zombie\n"
                     "%Cpu(s): 97.9 us,  1.8 sy,  0.0 ni,  0.1 id,  0.0 wa,  0.0 hi,  0.2 si,  0.0 st\n", "top.txt")
    assert top.values["load_1m"][:2] == (188.42, 1) and top.values["cpu_idle_pct"][:2] == (0.1, 3)
    uptime = parse_load(" 04:10:59 up 6 days,  3:11,  1 user,  load average: 12.05, 11.90, 11.20\n", "uptime.txt")
    assert uptime.values["load_1m"][0] == 12.05 and "cpu_idle_pct" not in uptime.values
    assert parse_load("188.42 171.07 96.33 183/1512 812044\n", "loadavg").values["load_1m"][0] == 188.42
    assert parse_load("no load here\n", "top.txt").values == {}
