"""The differential diagnosis: signatures are data that name the real text they were written for, and the decision
names a fault only when its evidence outweighs the runner-up's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from diagagent.config import Settings
from diagagent.diagnosis.analyses import Analyses
from diagagent.diagnosis.differential import Line, SignatureBook, decide, match_lines
from diagagent.diagnosis.fuse import _differential_lines
from diagagent.schemata.model import read_schemata_dir
from diagagent.telemetry import Bundle

ROOT = Path(__file__).resolve().parents[1]
BOOK = SignatureBook.load(ROOT / "knowledge" / "signatures.yaml")
SCHEMATA = read_schemata_dir(ROOT / "knowledge" / "schemata")
CATEGORIES = {s.fault: s.category for s in SCHEMATA}
CHECKS = {s.fault: s.discriminating_checks[0] for s in SCHEMATA if s.discriminating_checks}


def _dev_lines(case: str) -> list[str]:
    folder = ROOT / "evals" / "real" / "dev" / case
    assert folder.is_dir(), f"seen_in names dev:{case}, which is not a dev case"
    return [line for p in sorted(folder.rglob("*")) if p.is_file() and p.parent != folder
            for line in p.read_text(encoding="utf-8", errors="replace").splitlines()]


def _dev_findings(case: str, state_dir: Path) -> list[str]:
    """What the analyzers found in a dev case, in the words `where: findings` signatures match."""
    bundle = Bundle.open(ROOT / "evals" / "real" / "dev" / case)
    analyses = Analyses(bundle, Settings(state_dir=state_dir))
    analyses.run_all()
    return [line.text for line in _differential_lines(analyses) if line.where == "findings"]


@pytest.mark.parametrize("sig", BOOK.signatures, ids=[s.id for s in BOOK.signatures])
def test_each_signature_names_a_known_fault_and_the_real_text_it_was_written_for(sig, tmp_path: Path) -> None:
    assert sig.fault in CATEGORIES, f"{sig.id}: {sig.fault} has no seed schema"
    assert sig.seen_in, f"{sig.id}: say what real text it was written for"
    for ref in sig.seen_in:
        assert ref.startswith(("doc: ", "dev:")), f"{sig.id}: {ref!r} is neither documented output nor a dev case"
        if ref.startswith("doc: "):
            continue
        case = ref.removeprefix("dev:").strip()
        lines = _dev_findings(case, tmp_path) if sig.where == "findings" else _dev_lines(case)
        assert any(sig.pattern.search(line) for line in lines), f"{sig.id} matches no {sig.where} line of dev:{case}"


def test_ids_are_unique_and_patterns_compile() -> None:
    ids = [s.id for s in BOOK.signatures]
    assert len(ids) == len(set(ids))
    for s in BOOK.signatures:
        re.compile(s.match)


def test_a_kill_with_its_cause_in_the_evidence_is_that_cause() -> None:
    """An unexplained SIGKILL (strong) next to kubelet's disk-pressure eviction (strong) is the eviction, not a tie:
    process_killed_unknown stands only while none of `explained_by` has a sign (hand-made incident 8-12)."""
    assert all(f in CATEGORIES for fs in BOOK.explained_by.values() for f in [*fs])
    lines = [_line("torch.distributed.elastic.multiprocessing.api.SignalException: Process 41 got signal: 9 exitcode  : -9"),
             _line("  Warning  Evicted  29m  kubelet  The node was low on resource: ephemeral-storage.", role="context",
                   where="probes")]
    hits = match_lines(BOOK, lines)
    assert {h.fault for h in hits} >= {"process_killed_unknown", "disk_full"}
    decision = decide(BOOK, hits, CATEGORIES, None, CHECKS)
    assert decision.fault == "disk_full" and "process_killed_unknown" not in {c.fault for c in decision.candidates}
    alone = decide(BOOK, match_lines(BOOK, lines[:1]), CATEGORIES, None, CHECKS)
    assert alone.fault == "process_killed_unknown"


def _line(text: str, role: str = "cause", where: str = "logs") -> Line:
    return Line(file="logs/n1/rank-0.log", line=1, host="n1", text=text, role=role, where=where)


def test_decisive_device_state_outweighs_a_generic_cuda_error_and_the_cascade() -> None:
    lines = [_line("RuntimeError: CUDA error: an illegal memory access was encountered"),
             _line("[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5) ran for 600000 "
                   "milliseconds before timing out.", role="symptom"),
             _line("[Mon Nov 20 10:00:58 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
                   where="probes")]
    decision = decide(BOOK, match_lines(BOOK, lines), CATEGORIES, None, CHECKS)
    assert (decision.fault, decision.category, decision.tier) == ("gpu_fell_off_bus", "hardware", "decisive")
    assert decision.confidence == BOOK.confidence["decisive"]
    assert [c.fault for c in decision.candidates][:2] == ["gpu_fell_off_bus", "cuda_illegal_memory_access"]


def test_a_sigkill_with_no_kernel_line_is_a_kill_of_unknown_cause_and_the_oom_killer_decides_it() -> None:
    kill = [_line("traceback : Signal 9 (SIGKILL) received by PID 48213")]
    alone = decide(BOOK, match_lines(BOOK, kill), CATEGORIES, ("rendezvous_timeout", 0.6), CHECKS)
    assert alone.fault == "process_killed_unknown" and alone.tier == "strong"
    with_dmesg = kill + [_line("Out of memory: Killed process 48213 (python) total-vm:1234kB", where="probes")]
    assert decide(BOOK, match_lines(BOOK, with_dmesg), CATEGORIES, None, CHECKS).fault == "host_oom_killed"
    # a container's memory cgroup at its limit, as the kernel reports it (dev:pai-1089): the OOM killer ran
    memcg = "[Thu Aug 16 09:05:19 2018] memory: usage 184320000kB, limit {}kB, failcnt 2316326"
    at_limit = kill + [_line(memcg.format(184320000), where="probes").model_copy(update={"device_state": True})]
    assert decide(BOOK, match_lines(BOOK, at_limit), CATEGORIES, None, CHECKS).fault == "host_oom_killed"
    below = kill + [_line(memcg.format(284320000), where="probes").model_copy(update={"device_state": True})]
    assert decide(BOOK, match_lines(BOOK, below), CATEGORIES, None, CHECKS).fault == "process_killed_unknown"


def test_weak_evidence_is_not_sure_and_says_what_would_tell() -> None:
    lines = [_line("NCCL WARN NET/Socket : socket progress error: Connection reset by peer", role="symptom")]
    decision = decide(BOOK, match_lines(BOOK, lines, "training"), CATEGORIES, ("user_config_error", 0.4), CHECKS)
    assert decision.fault is None and decision.tier == "unsure"
    assert decision.confidence == BOOK.confidence["unsure"] < BOOK.confidence["strong"]
    # in training a peer's reset is the cascade of a peer that died; while connecting it is the network
    assert {c.fault for c in decision.candidates} == {"nccl_watchdog_timeout", "user_config_error"}
    at_init = decide(BOOK, match_lines(BOOK, lines, "init"), CATEGORIES, None, CHECKS)
    assert (at_init.fault, at_init.category) == ("nccl_bootstrap_failure", "network")
    assert decision.category is None  # the two candidates disagree on the category
    assert decision.check


def test_a_watchdog_timeout_alone_is_named_without_a_category() -> None:
    # the watchdog says a collective timed out, not whose fault it was (knowledge/signatures.yaml no_category)
    timeout = [_line("[Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, "
                     "Timeout(ms)=1800000) ran for 1800243 milliseconds before timing out.", role="symptom")]
    decision = decide(BOOK, match_lines(BOOK, timeout, "training"), CATEGORIES, None, CHECKS)
    assert (decision.fault, decision.tier, decision.category) == ("nccl_watchdog_timeout", "weak", None)
    assert CATEGORIES["nccl_watchdog_timeout"] == "infrastructure"  # its schema keeps one; the decision does not
    # beside a root error, the root error's category stands
    oom = timeout + [_line("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")]
    assert decide(BOOK, match_lines(BOOK, oom, "training"), CATEGORIES, None, CHECKS).category == "user_code"
    # undecided between it and a hint of the job's own code (an exception raised in the job's files, blind incident
    # hf-trainer-customloss-emptystack-3node), the hint's category stands: the watchdog names none to vote against it;
    # a hint lighter than the watchdog names no category
    raised = [_line('exception raised at: File "/work/sft/sft_loss.py", line 58, in compute_loss => RuntimeError: '
                    'stack expects a non-empty TensorList', where="findings")]
    both = decide(BOOK, match_lines(BOOK, timeout + raised, "training"), CATEGORIES, None, CHECKS)
    assert (both.fault, both.category) == (None, "user_code")
    thin = decide(BOOK, match_lines(BOOK, timeout * 3, "training"), CATEGORIES, ("framework_bug", 0.45), CHECKS)
    assert thin.category is None


def test_structural_findings_alone_decide_through_the_schema_and_nothing_means_none() -> None:
    schema_only = decide(BOOK, [], CATEGORIES, ("gpu_hang", 0.8), CHECKS)
    assert (schema_only.fault, schema_only.tier) == ("gpu_hang", "schema")
    assert decide(BOOK, [], CATEGORIES, ("gpu_hang", 0.2), CHECKS).fault is None
    # a schema matched below `schema_at_least` is no evidence at all: it names no category, and leaves a lone hint
    # the one fault in the differential (NCCL's 'NET/IB : No device found' at INFO, dev:pytorch-111424)
    faint = decide(BOOK, [], CATEGORIES, ("gpu_hang", BOOK.schema_at_least / 2), CHECKS)
    assert (faint.fault, faint.category, faint.candidates) == (None, None, [])
    hint = match_lines(BOOK, [_line("node013:37715:38896 [0] NCCL INFO NET/IB : No device found.", role="context")],
                       status="slow")
    lone = decide(BOOK, hint, CATEGORIES, ("gpu_straggler", BOOK.schema_at_least / 2), CHECKS)
    assert (lone.fault, lone.tier) == ("nccl_socket_fallback", "weak")
    nothing = decide(BOOK, [], CATEGORIES, None, CHECKS)
    assert (nothing.fault, nothing.tier, nothing.candidates) == (None, "none", [])


def test_a_hint_the_schema_agrees_with_is_named_at_the_weak_tier_not_the_strong() -> None:
    hint = [_line("RuntimeError: CUDA error: device-side assert triggered")]
    decision = decide(BOOK, match_lines(BOOK, hint), CATEGORIES, ("tokenizer_vocab_mismatch", 0.9), CHECKS)
    assert (decision.fault, decision.tier) == ("tokenizer_vocab_mismatch", "weak")
    assert decision.confidence == BOOK.confidence["weak"] < BOOK.confidence["strong"]
    proof = hint + [_line("Assertion `srcIndex < srcSelectDimSize` failed.")]
    assert decide(BOOK, match_lines(BOOK, proof), CATEGORIES, None, CHECKS).tier == "strong"


def test_a_schema_no_line_supports_weighs_less_than_another_faults_strong_signature() -> None:
    # transformers' staging-directory rename failing in a save (dev:axolotl-948): the FileNotFoundError matches the
    # checkpoint-load schema almost word for word, but the line signature names the framework's bug
    line = _line("FileNotFoundError: [Errno 2] No such file or directory: 'model/tmp-checkpoint-49' -> "
                 "'model/checkpoint-49'")
    decision = decide(BOOK, match_lines(BOOK, [line]), CATEGORIES, ("checkpoint_load_failure", 0.98), CHECKS)
    assert (decision.fault, decision.category) == ("framework_bug", "framework")
    # with no line signature at all, the schema alone still names its fault
    alone = decide(BOOK, [], CATEGORIES, ("checkpoint_load_failure", 0.98), CHECKS)
    assert alone.fault == "checkpoint_load_failure" and alone.tier == "schema"


def test_a_missing_driver_library_is_the_container_runtime_and_a_failed_lookup_names_dns() -> None:
    def fault(text: str) -> str | None:
        return decide(BOOK, match_lines(BOOK, [_line(text)]), CATEGORIES, None, CHECKS).fault

    # libcuda comes with the driver, mounted by the NVIDIA container runtime (dev:pytorch-3221): no Python package
    assert fault("ImportError: libcuda.so.1: cannot open shared object file: No such file or directory") \
        == "container_runtime_error"
    assert fault("ModuleNotFoundError: No module named 'flash_attn'") == "user_import_error"
    lookup = decide(BOOK, match_lines(BOOK, [_line("socket.gaierror: [Errno -3] Temporary failure in name resolution")]),
                    CATEGORIES, None, CHECKS)
    assert (lookup.fault, lookup.tier) == ("dns_resolution_failure", "strong")
    # c10d's IPv6 lookup warning shows on runs that go on over IPv4: only a hint (dev:grendel-gs-9)
    ipv6 = ("[W socket.cpp:601] [c10d] The IPv6 network addresses of (user, 53821) cannot be retrieved (gai error: -3 - "
            "Temporary failure in name resolution).")
    hint = decide(BOOK, match_lines(BOOK, [_line(ipv6)]), CATEGORIES, None, CHECKS)
    assert (hint.fault, hint.tier) == ("dns_resolution_failure", "weak")


def test_equal_signs_keep_the_analyzers_order_across_files_and_the_line_order_within_one() -> None:
    """DeepSpeed's OVERFLOW at the floor on line 1, then fused onto a progress bar on line 2, the bar's line ranked
    first by the analyzers (dev:transformers-14531): line 1 leads; another file's line keeps its place."""
    text = "[deepscale] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1"
    other = Line(file="logs/n2/rank-1.log", line=9, host="n2", text=text, role="context", where="logs")
    lines = [other, _line("  0%|▋   | 98/24128 [00:40<2:40:10,  2.50it/s]" + text, role="context").model_copy(
        update={"line": 2}), _line(text, role="context")]
    floor = [(h.line.file, h.line.line) for h in match_lines(BOOK, lines) if h.signature.id == "loss-scale-floor"]
    assert floor == [("logs/n2/rank-1.log", 9), ("logs/n1/rank-0.log", 1), ("logs/n1/rank-0.log", 2)]


def test_the_statement_that_raised_an_error_comes_after_the_error() -> None:
    """An interleaved paste quotes torch's raise statement (two literals) before the error it printed
    (dev:pytorch-116080): both prove the fault, the error's line leads; a raise statement alone still proves it
    (dev:whisper-vits-svc-97)."""
    raised = _line('raise RuntimeError("Distributed package doesn\'t have NCCL " "built in")', role="context")
    error = _line(": RuntimeErrorDistributed package doesn't have NCCL built in:", role="context").model_copy(
        update={"line": 3})
    assert [h.line.line for h in match_lines(BOOK, [raised, error])] == [3, 1]
    assert decide(BOOK, match_lines(BOOK, [raised]), CATEGORIES, None, CHECKS).candidates[0].fault == "user_config_error"


@pytest.mark.parametrize(("text", "fault"), [  # each as the software documents it (the signature's seen_in)
    ("RuntimeError: DataLoader worker (pid(s) 1234) exited unexpectedly", "dataloader_worker_killed"),
    ("RuntimeError: No CUDA GPUs are available", "gpu_unavailable"),
    (("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
      "the 'spawn' start method"), "user_config_error"),
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "cuda_driver_mismatch"),
    ("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!", "cuda_driver_mismatch"),
    (("HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal "
      "address."), "cuda_illegal_memory_access"),
    ("hgx-b09:88202:88415 [2] NCCL WARN NET/IB : mlx5_2:1 Got async event : port error", "ib_link_flap"),
    ("_pickle.UnpicklingError: invalid load key, 'v'.", "checkpoint_load_failure"),
    ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.",
     "user_config_error"),
    (("ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, "
      "but not set"), "user_config_error"),
    ("RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.",
     "user_config_error"),
    (("[2023-10-31 08:58:26,909] [INFO] [unfused_optimizer.py:282:_update_scale] Reducing dynamic loss scale from "
      "2.0 to 1.0"), "loss_scale_collapse"),
    ("Exit code: 137", "process_killed_unknown"),  # Horovod's summary of the first process to exit
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
     "user_code_exception"),
    ("node-1:12:34 [0] NCCL WARN NCCL_IB_HCA set but no device found", "nccl_socket_fallback"),
    ("[ 1234.567890] blk_update_request: I/O error, dev nvme0n1, sector 12345 op 0x1:(WRITE) flags 0x0",
     "storage_checkpoint_write_failure"),
    ("[ 1234.567890] nfs: server nfs01 not responding, still trying", "filesystem_mount_failure"),
    ("[ 1234.567890] mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 7: cc00008000010090", "node_crash"),
    ("[ 1234.567890] EDAC MC0: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0", "node_crash"),
    (("[ 1234.567890] NVRM: API mismatch: the client has the version 535.54, but this kernel module has the version "
      "525.60."), "cuda_driver_mismatch"),
    ("[ 1234.567890] mlx5_core 0000:3b:00.0: poll_health:800:(pid 0): Fatal error 1 detected", "nic_down"),
    ("NotFoundError: Key decoder/block_000/layer_002/rms_norm/scale not found in checkpoint", "checkpoint_load_failure"),
    (("botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the PutObject operation: Please "
      "reduce your request rate."), "storage_checkpoint_write_failure"),
    ("Unexpected result inf (message='found Inf in local grad norm for bucket #6 in backward pass')",
     "nan_loss_divergence"),
    ("[ 50.0] amdgpu 0000:05:00.0: amdgpu: 2 new uncorrectable hardware errors detected in UMC block",
     "gpu_ecc_uncorrectable"),
    ("E tensorflow/core/platform/default/posix_file_system.cc:56] close() failed: Transport endpoint is not connected",
     "filesystem_mount_failure"),
    ("E tensorflow/core/platform/s3/aws_logging.cc:60] Curl returned error code 28", "object_storage_error"),
    ("  Warning  DeadlineExceeded  12m  job-controller  Job was active longer than specified deadline",
     "job_time_limit"),
    ("FileNotFoundError: Checkpoint at /ckpt/epoch=11-step=48000.ckpt not found. Aborting training.",
     "checkpoint_load_failure"),
])
def test_documented_error_lines_name_their_fault(text: str, fault: str) -> None:
    hits = match_lines(BOOK, [_line(text)])
    assert hits and hits[0].fault == fault


def test_grpcs_deadline_exceeded_is_no_time_limit() -> None:
    # a kubelet's mount call that timed out once (gRPC status DEADLINE_EXCEEDED), not a Job past its deadline
    text = ('41m  Warning  FailedMount  pod/worker-3  MountVolume.SetUp failed for volume "dshm" : rpc error: '
            "code = DeadlineExceeded desc = context deadline exceeded")
    assert "job_time_limit" not in {h.fault for h in match_lines(BOOK, [_line(text)])}


def test_a_slowness_sign_counts_only_in_a_slow_job() -> None:
    # NCCL's fallback to sockets slows a job; beside a failed job's error it is none of the failure (dev:aml-kubernetes-58:
    # an invalid rank failed the init)
    lines = [_line("worker-1:25:25 [0] NCCL INFO NET/IB : No device found.", role="context"),
             _line("worker-1:25:25 [0] init.cc:981 NCCL WARN Invalid rank requested : 2/2")]
    assert {h.fault for h in match_lines(BOOK, lines, status="slow")} == {"nccl_socket_fallback", "user_config_error"}
    failed = match_lines(BOOK, lines, status="failed")  # (sockets in a failed setup: a hint of its bootstrap)
    assert {(h.fault, h.signature.strength) for h in failed} == {("user_config_error", "strong"),
                                                                 ("nccl_bootstrap_failure", "weak")}
    assert decide(BOOK, failed, CATEGORIES, None, CHECKS).fault == "user_config_error"


def test_a_sockets_enotconn_is_not_a_file_systems_and_an_eio_while_training_is_the_file_systems() -> None:
    # gloo's 'what():  Transport endpoint is not connected' names no file (dev:pytorch-58155, an NVLink fault)
    assert not [h for h in match_lines(BOOK, [_line("  what():  Transport endpoint is not connected")])
                if h.fault == "filesystem_mount_failure"]
    eio = [_line("OSError: [Errno 5] Input/output error: '/media/data/case_0001.npy'")]
    assert match_lines(BOOK, eio)[0].fault == "storage_checkpoint_write_failure"
    assert match_lines(BOOK, eio, stage="training")[0].fault == "filesystem_mount_failure"  # a data read


def test_a_last_resort_sign_speaks_only_when_nothing_else_does() -> None:
    # DeepSpeed's launcher kills the other ranks once one exits (dev:deepspeed-3160): with no error of the dead rank's
    # own, it died without a word; beside an error, the error is the cause and the launcher's line says nothing
    kill = _line("[2023-04-07 13:09:33,201] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 80")
    alone = decide(BOOK, match_lines(BOOK, [kill]), CATEGORIES, None, CHECKS)
    assert (alone.fault, alone.category, alone.tier) == ("process_killed_unknown", "infrastructure", "weak")
    assert not match_lines(BOOK, [kill.model_copy(update={"role": "symptom"})])  # another line was the cause
    error = _line("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    assert {h.fault for h in match_lines(BOOK, [error, kill])} == {"cuda_oom"}
    # a segfault with no Python error before it (dev:cscs-docs-pytorch): native code crashed, a hint of a bug in it
    segv = _line("640: [nid007306:244443:0:244443] Caught signal 11 (Segmentation fault: address not mapped to object)")
    crash = decide(BOOK, match_lines(BOOK, [segv]), CATEGORIES, None, CHECKS)
    assert (crash.fault, crash.tier) == ("framework_bug", "weak")
    bootstrap = _line("NCCL WARN Bootstrap : no socket interface found")
    assert "framework_bug" not in {h.fault for h in match_lines(BOOK, [bootstrap, segv])}
