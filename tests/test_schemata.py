"""Failure schemata: the seed knowledge, template matching, the chromadb cache, retrieval, learning, and the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from diagagent.apps.cli import build_app
from diagagent.config import Settings, packaged_content_dir
from diagagent.diagnosis import Diagnosis, Evidence, NodeScore, SchemaMatch
from diagagent.schemata import FailureSchema, SchemaCache, read_schemata_dir
from diagagent.schemata.matching import TemplateIndex, mask_line, template_regex

SEEDS = packaged_content_dir("knowledge") / "schemata"
CONVENTIONS = Path(__file__).resolve().parent.parent / "docs" / "conventions.md"

# Real-format lines (full, with their prefixes), each with the fault whose schema must come first.
REAL_LINES = [
    (("[Fri Nov 20 10:00:58 2026] NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python, DBE (double bit error)"),
     "gpu_ecc_uncorrectable"),
    (("[12.5] NVRM: Xid (PCI:0000:01:00): 95, pid=7062, Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No"),
     "gpu_ecc_uncorrectable"),
    (("Nov 20 10:00:58 node-017 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, "
     "GPU has fallen off the bus."),
     "gpu_fell_off_bus"),
    (("kernel: NVRM: Xid (PCI:0000:b9:00): 74, pid=<unknown>, name=<unknown>, NVLink: fatal error detected on link "
     "6(0x10000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)"),
     "nvlink_error"),
    (("NVRM: Xid (PCI:0000:3b:00): 64, pid='<unknown>', name=<unknown>, Row Remapper Error: (0x00000002eebc4100) - "
     "All reserved rows for bank are remapped"),
     "gpu_row_remap_failure"),
    (("kernel: [16450076.435595] NVRM: Xid (PCI:0002:00:00): 119, pid=1582259, name=nvc:[driver], Timeout after 6s "
     "of waiting for RPC response from GPU1 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20802a02 0x8)."),
     "gpu_gsp_timeout"),
    (("node-2:5776:5902 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer 10.2.0.5<33092> "
     "with error 12, opcode 0, len 0, vendor err 129 (Recv)"),
     "ib_transport_retry_exceeded"),
    (("[rank12]:[E1120 10:01:02.123456 ProcessGroupNCCL.cpp:683] [Rank 12] Watchdog caught collective operation "
     "timeout: WorkNCCL(SeqNum=78, OpType=ALLREDUCE, NumelIn=80, NumelOut=80, Timeout(ms)=600000) ran for 600096 "
     "milliseconds before timing out."),
     "nccl_watchdog_timeout"),
    (("[Tue Nov 24 03:11:09 2026] Out of memory: Killed process 48213 (python3) total-vm:1191835648kB, "
     "anon-rss:231178828kB, file-rss:512000kB, shmem-rss:0kB, UID:1001 pgtables:452000kB oom_score_adj:0"),
     "host_oom_killed"),
    (("slurmstepd: error: *** JOB 918273 ON node-031 CANCELLED AT 2026-11-20T10:12:00 DUE TO PREEMPTION ***"),
     "scheduler_preemption"),
    (("[default3]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity "
     "of 79.15 GiB of which 1.02 GiB is free."),
     "cuda_oom"),
    (("[rank0]: ModuleNotFoundError: No module named 'flash_attn'"),
     "user_import_error"),
    (("RuntimeError: t == DeviceType::CUDA INTERNAL ASSERT FAILED at \"/opt/pytorch/c10/cuda/impl/CUDAGuardImpl.h\":"
     "28, please report a bug to PyTorch."),
     "pytorch_internal_assert"),
    (("pcieport 0000:00:03.1: AER: Uncorrected (Fatal) error received: 0000:3b:00.0"),
     "pcie_aer_error"),
    (("[W socket.cpp:663] [c10d] The client socket has failed to connect to [node-001]:29500 "
     "(errno: 111 - Connection refused)."),
     "c10d_store_unreachable"),
    (("RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory"),
     "checkpoint_corrupt"),
    (("../aten/src/ATen/native/cuda/Indexing.cu:1290: indexSelectLargeIndex: block: [264,0,0], thread: [64,0,0] "
     "Assertion `srcIndex < srcSelectDimSize` failed."),
     "tokenizer_vocab_mismatch"),
    (("RuntimeError: DataLoader worker (pid 81234) is killed by signal: Bus error. It is possible that dataloader's "
     "workers are out of shared memory."),
     "dataloader_worker_killed"),
    (("Kernel panic - not syncing: Fatal machine check"),
     "node_crash"),
    (("  Warning: Failed to pull image \"nvcr.io/nvidia/pytorch:24.10-py3\": rpc error: code = Unknown"),
     "container_image_pull_failure"),
]


def _settings(tmp: Path, **kw: object) -> Settings:
    return Settings(state_dir=tmp / "state", **kw)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> SchemaCache:
    """One embedded cache with the seeds, shared read-only by the retrieval tests."""
    return SchemaCache.open(_settings(tmp_path_factory.mktemp("seeded")))


def _diagnosis(job: str, fault: str | None, category: str | None, lines: list[str], **kw: object) -> Diagnosis:
    evidence = [Evidence(id=f"e{i + 1}", kind="log", text=t) for i, t in enumerate(lines)]
    return Diagnosis(job_id=job, fault=fault, category=category, evidence=evidence, **kw)


# ---- seed knowledge ---------------------------------------------------------------------------------------------

def test_seeds_cover_every_convention_fault_and_many_more_kinds() -> None:
    seeds = read_schemata_dir(SEEDS)
    faults = {s.fault for s in seeds}
    convention_faults = set(re.findall(r"`([a-z_]+)`", CONVENTIONS.read_text().split("## Fault ids")[1]
                                       .split("## Categories")[0]))
    assert len(convention_faults) >= 18
    assert convention_faults <= faults, convention_faults - faults
    assert len(seeds) >= 40
    assert len(faults - convention_faults) >= 22


def test_seed_schemata_are_complete_and_their_templates_compile() -> None:
    for s in read_schemata_dir(SEEDS):
        assert s.templates and s.symptoms and s.discriminating_checks and s.actions and s.references, s.id
        assert s.origin == "seed" and s.outcomes.times_confirmed == 0
        for t in s.templates:
            template_regex(t)  # compiles


def test_convention_faults_carry_the_convention_category_and_actions() -> None:
    expected = {"gpu_ecc_uncorrectable": ("hardware", "evict"), "nvlink_error": ("hardware", "evict"),
                "ib_link_flap": ("network", "evict"), "slow_link": ("network", "evict"),
                "host_oom_killed": ("infrastructure", "restart"), "nccl_internal_error": ("framework", "restart"),
                "cuda_oom": ("user_code", "none"), "user_import_error": ("user_code", "rollback"),
                "nan_loss_divergence": ("data", "restart"), "dataloader_corrupt_sample": ("data", "none")}
    for s in read_schemata_dir(SEEDS):
        if s.fault in expected:
            category, action = expected[s.fault]
            assert s.category == category, s.id
            assert action in {a.kind for a in s.actions}, s.id


# ---- matching ---------------------------------------------------------------------------------------------------

def test_mask_line_keeps_the_words_and_codes_and_drops_the_variables() -> None:
    line = "Nov 20 10:00:58 node-002 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, DBE (double bit error)"
    assert mask_line(line) == "kernel: NVRM: Xid (PCI:<*>): 48, pid=<*>, DBE (double bit error)"
    nccl = ("node-002:1234:5678 [1] NCCL WARN NET/IB: Got completion from peer 10.1.2.3<40554> with status=12 "
            "opcode=129 len=0 vendor err 129 (Recv) hca mlx5_1")
    masked = mask_line(nccl)
    assert masked.startswith("NCCL WARN NET/IB: Got completion from peer <*> with status=12")
    assert "10.1.2.3" not in masked and "mlx5_1" not in masked
    assert template_regex(masked).search(nccl.replace("10.1.2.3", "10.9.9.9"))


def test_template_overlap_prefers_the_specific_full_match() -> None:
    a = FailureSchema(id="disk", title="disk", category="infrastructure", fault="disk_full", root_cause="x",
                      templates=["No space left on device"])
    b = FailureSchema(id="ckpt", title="ckpt", category="infrastructure", fault="ckpt", root_cause="x",
                      templates=["OSError: [Errno 28] No space left on device: '<*>iter_<*>'"])
    c = FailureSchema(id="other", title="o", category="network", fault="o", root_cause="x", templates=["Link down"])
    index = TemplateIndex([a, b, c])
    ov = index.overlap(["[rank3]: OSError: [Errno 28] No space left on device: '/ckpt/42/iter_0001000/x.distcp'"])
    scores = dict(zip(index.ids, ov.per_schema))
    assert scores["ckpt"] > scores["disk"] > 0.2
    assert scores["other"] == 0.0
    assert ov.matches(index.ids.index("ckpt"))[0].template == b.templates[0]


# ---- retrieval --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("line", "fault"), REAL_LINES, ids=[f for _, f in REAL_LINES])
def test_real_lines_retrieve_their_schema_first(seeded: SchemaCache, line: str, fault: str) -> None:
    hits = seeded.search([line], k=3)
    assert hits[0].fault == fault, [(h.id, h.score) for h in hits]


def test_hits_carry_scores_and_convert_to_schema_matches(seeded: SchemaCache) -> None:
    xid94 = "NVRM: Xid (PCI:0000:3b:00): 94, pid=77, name=python3, Contained: SM (0x1). RST: No, D-RST: No"
    hits = seeded.search(["RuntimeError: CUDA error: uncorrectable ECC error encountered", xid94], k=5)
    assert len(hits) == 5
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    top = hits[0]
    assert top.fault == "gpu_ecc_uncorrectable" and top.template_overlap > 0.8 and 0 < top.similarity <= 1
    assert top.matched_lines and "Xid" in top.matched_lines[0].text + top.matched_lines[-1].text
    match = top.to_match()
    assert isinstance(match, SchemaMatch) and match.schema_id == top.id and match.score == top.score


def test_category_filter_and_symptom_phrases(seeded: SchemaCache) -> None:
    hits = seeded.search(["Watchdog caught collective operation timeout"], k=5, category="user_code")
    assert hits and all(h.failure_schema.category == "user_code" for h in hits)
    words = seeded.search(["one GPU runs hot and throttles, every iteration slower, no error"], k=3)
    assert "gpu_straggler" in [h.fault for h in words]
    assert seeded.search([], k=3) == [] and seeded.search(["   "], k=3) == []


# ---- cache lifecycle --------------------------------------------------------------------------------------------

def test_seeds_load_once_and_upgrade_without_clobbering_learned_state(tmp_path: Path) -> None:
    knowledge = tmp_path / "knowledge"
    (knowledge / "schemata").mkdir(parents=True)
    seed_file = knowledge / "schemata" / "gpu.yaml"
    seed_file.write_text((SEEDS / "gpu.yaml").read_text())
    settings = _settings(tmp_path, knowledge_dir=knowledge)
    cache = SchemaCache.open(settings)
    n_seeds = cache.count()
    xid79 = ["NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=python3, GPU has fallen off the bus."]
    strengthened = cache.learn(_diagnosis("j1", "gpu_fell_off_bus", "hardware", xid79 + ["GPU 3 is gone"]),
                               "alice", "confirmed")
    learned = cache.learn(_diagnosis("j2", "bmc_firmware_bug", "hardware", ["BMC: watchdog reset by firmware 2.1"]),
                          "bob", "confirmed")
    assert cache.count() == n_seeds + 1 and learned.origin == "learned"
    assert SchemaCache.open(settings).sync_seeds(knowledge / "schemata") == []  # unchanged seeds: nothing rewritten

    data = yaml.safe_load(seed_file.read_text())
    for item in data["schemata"]:
        if item["id"] == strengthened.id:
            item["version"] = 2
            item["title"] = "GPU lost from the PCIe bus (Xid 79)"
    seed_file.write_text(yaml.safe_dump(data, sort_keys=False))
    reopened = SchemaCache.open(settings)
    upgraded = reopened.get(strengthened.id)
    assert upgraded is not None and upgraded.version == 2 and upgraded.title.startswith("GPU lost")
    assert upgraded.outcomes.times_confirmed == 1 and upgraded.outcomes.recent_jobs == ["j1"]
    assert upgraded.learned_templates == strengthened.learned_templates
    assert reopened.get(learned.id) == learned
    assert reopened.count() == n_seeds + 1

    # a seed taken out of the folder is retired, unless an operator confirmed it; learned schemata stay
    dropped = next(item["id"] for item in data["schemata"] if item["id"] != strengthened.id)
    data["schemata"] = [item for item in data["schemata"] if item["id"] not in (dropped, strengthened.id)]
    seed_file.write_text(yaml.safe_dump(data, sort_keys=False))
    pruned = SchemaCache.open(settings)
    assert pruned.get(dropped) is None and pruned.get(strengthened.id) is not None
    assert pruned.get(learned.id) == learned and pruned.count() == n_seeds


def test_learn_strengthens_the_same_failure_without_duplicates(tmp_path: Path) -> None:
    cache = SchemaCache.open(_settings(tmp_path))
    before = cache.count()
    lines = ["NVRM: Xid (PCI:0000:3b:00): 74, pid=9, name=python3, NVLink: fatal error detected on link 3(0x0)",
             "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution",
             "nvlink-probe: link 3 replay counter 4410 on node-007 GPU 2"]  # a line no template knows yet
    d = _diagnosis("77", "nvlink_error", "hardware", lines, faulty_nodes=[NodeScore(host="node-007", score=1)])
    first = cache.learn(d, "alice", "confirmed")
    again = cache.learn(d, "alice", "confirmed")  # the same job again: counted once
    other = cache.learn(d.model_copy(update={"job_id": "78"}), "bob", "confirmed")
    assert first.id == again.id == other.id == "gpu-nvlink-xid74"
    assert cache.count() == before
    assert other.outcomes.times_confirmed == 2 and other.outcomes.last_confirmed_by == "bob"
    assert other.learned_templates == ["nvlink-probe: link 3 replay counter <*> on <*> GPU 2"]
    assert cache.get(other.id) == other


def test_learn_new_failure_then_it_is_retrieved(tmp_path: Path) -> None:
    cache = SchemaCache.open(_settings(tmp_path))
    lines = ["hbm-scrubber[1142]: bank 7 scrub failure on GPU 5, quarantine requested"]
    d = _diagnosis("91", "hbm_scrub_failure", "hardware", lines, root_cause="HBM scrubber quarantines a bank",
                   stage="training", faulty_nodes=[NodeScore(host="node-3", score=1)])
    schema = cache.learn(d, "carol", "confirmed")
    assert schema.origin == "learned" and schema.fault == "hbm_scrub_failure" and schema.spatial == "one_node"
    assert schema.templates == ["hbm-scrubber[<*>]: bank 7 scrub failure on GPU 5, quarantine requested"]
    hits = cache.search(["hbm-scrubber[2231]: bank 7 scrub failure on GPU 5, quarantine requested"], k=1)
    assert hits[0].id == schema.id and hits[0].template_overlap > 0.9
    with pytest.raises(ValueError):
        cache.learn(_diagnosis("92", None, None, lines), "carol", "confirmed")


def test_rejected_diagnosis_becomes_a_counter_example_that_lowers_the_score(tmp_path: Path) -> None:
    cache = SchemaCache.open(_settings(tmp_path))
    lines = ["mlx5_core 0000:3b:00.0 ib0: Link down"]
    top = cache.search(lines, k=1)[0]
    d = _diagnosis("55", top.fault, top.failure_schema.category, lines,
                   schemata=[top.to_match()])
    rejected = cache.learn(d, "dave", "rejected")
    assert rejected.id == top.id and rejected.outcomes.times_rejected == 1
    assert rejected.counter_examples[0].job_id == "55" and rejected.counter_examples[0].rejected_by == "dave"
    after = {h.id: h.score for h in cache.search(lines, k=10)}
    assert after[top.id] < top.score
    with pytest.raises(ValueError):
        cache.learn(d, "dave", "maybe")  # type: ignore[arg-type]


def test_add_refuses_an_existing_id_and_export_import_round_trip(tmp_path: Path) -> None:
    cache = SchemaCache.open(_settings(tmp_path))
    schema = cache.get("cuda-oom")
    assert schema is not None
    with pytest.raises(ValueError):
        cache.add(schema)
    paths = cache.export_dir(tmp_path / "export")
    assert len(paths) == cache.count()
    other = SchemaCache.open(_settings(tmp_path / "b"), load_seeds=False)
    assert other.count() == 0
    report = other.import_dir(tmp_path / "export")
    assert len(report.added) == cache.count() and not report.skipped
    assert other.get("cuda-oom").templates == schema.templates  # type: ignore[union-attr]
    assert other.import_dir(tmp_path / "export").skipped == report.added


# ---- CLI --------------------------------------------------------------------------------------------------------

def test_kb_cli_list_show_search_add_export_import(tmp_path: Path) -> None:
    runner = CliRunner()
    app = build_app()
    listed = runner.invoke(app, ["kb", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert len(json.loads(listed.stdout)) >= 40
    shown = runner.invoke(app, ["kb", "show", "gpu-fell-off-bus-xid79"])
    assert shown.exit_code == 0 and "GPU has fallen off the bus" in shown.stdout
    assert runner.invoke(app, ["kb", "show", "no-such-schema"]).exit_code == 2
    found = runner.invoke(app, ["kb", "search", "--json", "-k", "2",
                                "NVRM: Xid (PCI:0000:18:00): 79, pid=4, GPU has fallen off the bus."])
    assert found.exit_code == 0 and json.loads(found.stdout)[0]["failure_schema"]["fault"] == "gpu_fell_off_bus"
    new = tmp_path / "new.yaml"
    new.write_text(yaml.safe_dump({"id": "site-bmc-reset", "title": "BMC resets the node", "category": "hardware",
                                   "fault": "bmc_reset", "root_cause": "BMC firmware",
                                   "templates": ["ipmi: BMC reset by watchdog <*>"]}))
    assert runner.invoke(app, ["kb", "add", str(new)]).exit_code == 0
    assert runner.invoke(app, ["kb", "add", str(new)]).exit_code == 2  # exists
    assert runner.invoke(app, ["kb", "export", str(tmp_path / "out")]).exit_code == 0
    assert (tmp_path / "out" / "site-bmc-reset.yaml").is_file()
    imported = runner.invoke(app, ["kb", "import", str(tmp_path / "out")])
    assert imported.exit_code == 0 and "added 0" in imported.stdout


def test_a_watchdog_storm_does_not_drown_the_root_line(seeded: SchemaCache) -> None:
    watchdog = [f"[rank{r}]:[E1120 10:11:02.1 ProcessGroupNCCL.cpp:683] [Rank {r}] Watchdog caught collective operation "
                f"timeout: WorkNCCL(SeqNum=78, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
                f"600096 milliseconds before timing out." for r in (1, 2, 3, 4)]
    xid = "[Fri Nov 20 10:00:58 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus."
    assert seeded.search(watchdog + [xid], k=1)[0].fault == "gpu_fell_off_bus"
    alone = seeded.search(watchdog, k=1)[0]
    assert alone.fault == "nccl_watchdog_timeout" and alone.failure_schema.cascade
