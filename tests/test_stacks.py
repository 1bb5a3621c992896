"""Stack aggregation: py-spy text and JSON parsing, normalization, clustering, eviction set, FR summary, CLI."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from diagagent.analysis.pyspy import parse_dump
from diagagent.analysis.stacks import (
    analyze_stacks,
    cluster_signatures,
    find_collective,
    normalize_frame,
    rank_ranges,
)
from diagagent.apps.cli import build_app
from diagagent.telemetry import Bundle
from tests.stack_bundles import GRAD_SYNC, P2P_RECV, STUCK_COMPUTE, TP_ALLREDUCE, make_stack_bundle

FIX = Path(__file__).parent / "fixtures" / "stacks"


def test_text_dump_every_thread_subprocess_and_second_dump() -> None:
    p = parse_dump((FIX / "pyspy-megatron-allreduce.txt").read_text())
    assert p.skipped == 0
    assert [d.pid for d in p.dumps] == [48213, 48601, 48213]
    first, child, again = p.dumps
    assert child.parent_pid == 48213 and first.parent_pid is None
    assert first.python == "3.10.12" and first.local_rank == 3
    assert [t.status for t in first.threads] == ["active", "idle", "idle"]
    assert first.threads[2].name == "Thread-2 (_pin_memory_loop)"
    main = first.main_thread()
    assert main is not None and main.frames[0].function == "all_reduce" and main.frames[0].line == 2050
    assert again.threads[0].status == "active+gil"


def test_native_frames_and_addresses_are_normalized() -> None:
    p = parse_dump((FIX / "pyspy-native.txt").read_text())
    main = p.dumps[0].main_thread()
    assert main is not None
    natives = [f for f in main.frames if f.native]
    assert {f.function for f in natives} >= {"cudaStreamSynchronize", "THPVariable_item", "Py_RunMain"}
    assert not any(f.native for f in main.frames if f.file.endswith(".py"))
    addr = next(f for f in main.frames if f.function.startswith("0x"))
    assert normalize_frame(addr) == "<addr> (libcuda.so)"
    py = next(f for f in main.frames if f.function == "_reduce_loss")
    assert normalize_frame(py) == "_reduce_loss (workspace/train/engine.py)"
    assert normalize_frame(py, with_lines=True).endswith(":212)")


def test_locals_and_hex_thread_ids() -> None:
    p = parse_dump((FIX / "pyspy-locals.txt").read_text())
    assert p.skipped == 0
    d = p.dumps[0]
    assert [f.function for f in d.threads[0].frames][:2] == ["recv", "_communicate"]
    assert d.threads[1].thread_id == "0x7F00D1FFF700" and d.threads[1].name is None


def test_truncated_dump_is_skipped_and_counted_not_fatal() -> None:
    p = parse_dump((FIX / "pyspy-truncated.txt").read_text())
    assert p.skipped >= 4 and p.problems
    assert len(p.dumps) == 2
    assert [f.function for f in p.dumps[0].threads[0].frames] == ["all_gather_into_tensor", "wrapper"]
    assert p.dumps[1].threads == []


def test_json_dumps_concatenated_and_main_thread() -> None:
    p = parse_dump((FIX / "pyspy-dump.json").read_text())
    assert p.json and len(p.dumps) == 2 and p.skipped == 0
    d = p.dumps[0]
    assert d.local_rank == 5 and d.pid == 2211
    main = d.main_thread(printed_oldest_first=False)
    assert main is not None and main.frames[0].function == "synchronize" and main.status == "active+gil"
    bad = parse_dump('[{"pid": 1, "frames": [{"name": "f", "filename": "a.py", "line": 3}]}]\n[{"pid": 1, "fr')
    assert len(bad.dumps) == 1 and bad.skipped == 1


def test_find_collective_names_the_op_and_call_site() -> None:
    tokens = tuple(normalize_frame(f) for f in parse_dump((FIX / "pyspy-megatron-allreduce.txt").read_text())
                   .dumps[0].threads[0].frames)
    op, site = find_collective(tokens)
    assert op == "nccl:all_reduce"
    assert site is not None and site.startswith("finish_grad_sync")
    assert find_collective(("synchronize (torch/cuda/__init__.py)",)) == (None, None)


def test_similar_signatures_merge_but_a_different_innermost_frame_does_not() -> None:
    base = tuple(f"f{i} (m/x{i}.py)" for i in range(20))
    near = base[:10] + ("extra (m/y.py)",) + base[10:]
    other = ("synchronize (torch/cuda/__init__.py)",) + base[1:]
    ids = cluster_signatures([base, near, other], [10, 2, 1])
    assert ids[0] == ids[1] and ids[2] != ids[0]


def _pipeline_hang(rank: int, _round: int) -> list[str]:
    # 16 nodes, tp 8, dp 4, pp 4 (rank = tp + 8 dp + 32 pp): GPU of rank 75 (node 9: dp 1, pp 2) hangs
    if rank == 75:
        return STUCK_COMPUTE
    if rank // 8 == 9:
        return TP_ALLREDUCE
    if (rank // 8) % 4 == 1:
        return P2P_RECV  # the rest of that pipeline waits on it
    return GRAD_SYNC


def test_pipeline_hang_evicts_the_pp_group_with_reasoning(tmp_path: Path) -> None:
    root = make_stack_bundle(tmp_path / "b", 16, 8, 8, 4, 4, _pipeline_hang)
    with Bundle.open(root) as b:
        f = analyze_stacks(b)
    assert f.present and f.ranks == 128 and f.rounds == 1
    healthy = [c for c in f.clusters if c.role == "healthy"]
    assert len(healthy) == 1 and len(healthy[0].ranks) == 96 and healthy[0].collective == "nccl:all_reduce"
    e = f.eviction
    assert e is not None and e.kind == "pp" and e.machine_count == 4
    assert e.hosts == ["node-001", "node-005", "node-009", "node-013"] and not e.unexplained_ranks
    assert "PP group" in e.reasoning and "4 machines" in e.reasoning
    fr = f.fr_summary
    assert fr is not None and fr.collective == "nccl:all_reduce" and fr.not_joined_ranks == [75]
    assert len(fr.behind_ranks) == 32 and "COLLECTIVE_TYPE_MISMATCH" in fr.text
    assert f.suspects[0].host == "node-009" and f.suspects[0].files


def test_one_node_outlier_evicts_one_machine(tmp_path: Path) -> None:
    def frames(rank: int, _r: int) -> list[str]:
        return STUCK_COMPUTE if rank == 13 else (TP_ALLREDUCE if rank // 8 == 1 else GRAD_SYNC)

    root = make_stack_bundle(tmp_path / "b", 8, 8, 8, 1, 8, frames)
    with Bundle.open(root) as b:
        f = analyze_stacks(b)
    assert f.eviction is not None and f.eviction.hosts == ["node-001"] and f.eviction.machine_count == 1
    assert f.eviction.kind == "tp"


def test_fail_slow_rounds_pick_the_most_flagged_group(tmp_path: Path) -> None:
    # straggler on node 2 (ranks 16-23): caught behind in 4 of 5 rounds; a healthy rank is odd in one round
    def frames(rank: int, rnd: int) -> list[str]:
        if rank // 8 == 2 and rnd != 3:
            return STUCK_COMPUTE if rank == 18 else TP_ALLREDUCE
        if rank == 40 and rnd in (1, 3):
            return STUCK_COMPUTE
        return GRAD_SYNC

    root = make_stack_bundle(tmp_path / "b", 8, 8, 8, 2, 4, frames, rounds=5)
    with Bundle.open(root) as b:
        f = analyze_stacks(b)
    assert f.rounds == 5
    e = f.eviction
    assert e is not None and e.hosts == ["node-002"] and e.rounds_flagged == 4
    assert "5 dump rounds" in e.reasoning
    assert 40 not in f.fr_summary.behind_ranks  # type: ignore[union-attr]


def test_missing_dumps_are_the_outliers_when_everyone_else_agrees(tmp_path: Path) -> None:
    root = make_stack_bundle(tmp_path / "b", 8, 8, 8, 1, 8, lambda r, _: GRAD_SYNC, skip_ranks=set(range(24, 32)))
    with Bundle.open(root) as b:
        f = analyze_stacks(b)
    assert f.fr_summary is not None and f.fr_summary.ranks_without_dump == list(range(24, 32))
    assert f.eviction is not None and f.eviction.hosts == ["node-003"]


def test_no_stacks_says_so(small_bundle: Path, tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text('job_id: "1"\nnodes: [{host: a}]\n')
    with Bundle.open(tmp_path) as b:
        f = analyze_stacks(b)
    assert not f.present and "no stacks" in f.note
    with Bundle.open(small_bundle) as b:
        f = analyze_stacks(b)
    assert f.present and f.ranks == 1 and f.eviction is None


def test_rank_ranges() -> None:
    assert rank_ranges([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    assert rank_ranges([]) == ""


def test_cli_stacks_json_and_text(tmp_path: Path) -> None:
    root = make_stack_bundle(tmp_path / "b", 16, 8, 8, 4, 4, _pipeline_hang)
    runner = CliRunner()
    res = runner.invoke(build_app(), ["stacks", str(root), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["eviction"]["kind"] == "pp" and data["eviction"]["machine_count"] == 4
    res = runner.invoke(build_app(), ["stacks", str(root)])
    assert res.exit_code == 0 and "evict PP group" in res.output


def test_noisy_fail_slow_samples_without_a_standout_group_evict_nothing(tmp_path: Path) -> None:
    # every rank is caught computing now and then, no group more than the others: chance, not a straggler
    def frames(rank: int, rnd: int) -> list[str]:
        return STUCK_COMPUTE if (rank * 7 + rnd * 3) % 5 == 0 else GRAD_SYNC

    root = make_stack_bundle(tmp_path / "b", 8, 8, 8, 1, 8, frames, rounds=3)
    with Bundle.open(root) as b:
        f = analyze_stacks(b)
    assert any(c.role == "outlier" for c in f.clusters)
    assert f.eviction is None and "chance" in f.note


def test_megatron_batched_p2p_wait_is_a_p2p_op() -> None:
    tokens = ("wait (torch/distributed/distributed_c10d.py)",
              "_batched_p2p_ops (megatron/core/pipeline_parallel/p2p_communication.py)",
              "recv_forward (megatron/core/pipeline_parallel/p2p_communication.py)")
    assert find_collective(tokens)[0] == "nccl:batch_isend_irecv"


def test_a_ray_workers_training_thread_stands_for_it_not_its_task_loop() -> None:
    """Ray Train runs train_loop_per_worker in a thread of its own while the worker's main thread waits in Ray's task
    loop: the training thread is where the rank is."""
    text = ("Process 3404: ray::_RayTrainWorker__execute.get_next\n"
            "Python v3.10.14 (/home/ray/anaconda3/bin/python3.10)\n\n"
            'Thread 3404 (idle): "MainThread"\n'
            "    main_loop (ray/_private/worker.py:879)\n"
            "    <module> (ray/_private/workers/default_worker.py:289)\n"
            'Thread 3501 (active): "Thread-2"\n'
            "    train_loop_per_worker (train_moe.py:171)\n"
            "    train_fn (ray/train/_internal/utils.py:169)\n"
            "    run (ray/train/_internal/utils.py:57)\n")
    thread = parse_dump(text).dumps[0].main_thread()
    assert thread is not None and thread.frames[0].function == "train_loop_per_worker"
