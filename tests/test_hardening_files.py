"""One bad file never flips a diagnosis: each hostile file (tests/attacks.py) in an otherwise clean simulated bundle
keeps the clean bundle's fault and faulty nodes, and the diagnosis's notes name the file.

Plus what happens when an analyzer itself breaks (a note, lower confidence; MemoryError is not swallowed), the
wall-clock budget per analyzer, and the agent's flow_timeline tool asked for an absurd range.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from diagagent.config import Settings
from diagagent.contract import Diagnosis
from diagagent.diagnosis import Analyses, diagnose
from diagagent.telemetry import Bundle, BundleError
from tests import attacks


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Settings]:
    base = tmp_path_factory.mktemp("hardening")
    settings = Settings(state_dir=base / "state", jobs_dir=base / "jobs")  # one schema cache for the module
    return attacks.make_clean(base / "clean" / "bundle"), settings


@pytest.fixture(scope="module")
def clean(world: tuple[Path, Settings]) -> tuple[Diagnosis, Analyses]:
    root, settings = world
    with Bundle.open(root) as bundle:
        a = Analyses(bundle, settings)
        return diagnose(bundle, settings, analyses=a), a


def _attacked(world: tuple[Path, Settings], tmp_path: Path, attack, settings: Settings | None = None):
    root, default = world
    case = tmp_path / "case" / "bundle"
    shutil.copytree(root, case, symlinks=True)
    rel = attack(case)
    settings = settings or default
    with Bundle.open(case) as bundle:
        a = Analyses(bundle, settings)
        return rel, diagnose(bundle, settings, analyses=a), a


def _named(d: Diagnosis, rel: str) -> list[str]:
    return [n for n in d.notes if rel in n]


def test_the_clean_bundle_is_a_gpu_hang_on_one_node_with_an_eviction(clean) -> None:
    d, a = clean
    assert d.fault == "gpu_hang" and d.faulty_hosts == ["node-003"]
    assert a.stacks is not None and a.stacks.eviction is not None and not a.incomplete
    assert not any("read problem" in n or "skipped" in n for n in d.notes)


@pytest.mark.parametrize("attack", [attacks.pyspy_json_bad_types, attacks.pyspy_json_nested,
                                    attacks.pyspy_json_odd_values, attacks.stack_symlink,
                                    attacks.stack_huge_numbers, attacks.stack_binary])
def test_a_bad_stack_file_is_skipped_and_named_and_the_hang_stays_on_its_node(world, clean, tmp_path, attack) -> None:
    rel, d, a = _attacked(world, tmp_path, attack)
    assert (d.fault, d.faulty_hosts) == (clean[0].fault, clean[0].faulty_hosts)
    assert _named(d, rel), d.notes
    assert a.stacks is not None and a.stacks.eviction is not None and not a.incomplete
    assert a.stacks.unusable_files == 1 and 1 in a.stacks.unknown_ranks  # rank 1's state is unknown, not "no dump"
    assert 1 not in a.stacks.fr_summary.ranks_without_dump  # type: ignore[union-attr]
    assert d.confidence == clean[0].confidence


@pytest.mark.parametrize("attack", [attacks.probe_json_nested, attacks.probe_symlink, attacks.probe_json_bad_types,
                                    attacks.probe_huge_numbers, attacks.probe_binary])
def test_a_bad_probe_file_is_skipped_and_named_and_the_other_probes_still_count(world, clean, tmp_path,
                                                                                attack) -> None:
    rel, d, a = _attacked(world, tmp_path, attack)
    assert (d.fault, d.faulty_hosts) == (clean[0].fault, clean[0].faulty_hosts)
    assert _named(d, rel), d.notes
    assert a.health is not None and not a.incomplete
    assert a.health.files >= clean[1].health.files  # type: ignore[union-attr]  # every other probe still read
    assert any(rel in p for p in a.health.problems) or a.health.skipped  # counted in the findings too


def test_a_nested_json_probe_names_its_file_and_what_was_expected(world, tmp_path) -> None:
    rel, d, _ = _attacked(world, tmp_path, attacks.probe_json_nested)
    note = _named(d, rel)[0]
    assert "nested too deeply" in note and '"status"' in note and "skipped" in note


def test_one_bad_bytes_cell_costs_one_flow_record_not_the_file(world, clean, tmp_path) -> None:
    rel, d, a = _attacked(world, tmp_path, attacks.flows_bad_cell)
    assert a.flows is not None and a.flows.has_flows
    kept, before = a.flows.counts.job, clean[1].flows.counts.job  # type: ignore[union-attr]
    assert before - 1 <= kept <= before  # the record with the bad cell, if it was the job's, and nothing else
    assert a.flows.counts.total == clean[1].flows.counts.total  # type: ignore[union-attr]
    note = _named(d, rel)[0]
    assert "column bytes" in note and "not numbers" in note and "data row" in note
    assert (d.fault, d.faulty_hosts) == (clean[0].fault, clean[0].faulty_hosts)


def test_absurd_flow_values_are_skipped_and_counted(world, clean, tmp_path) -> None:
    rel, d, a = _attacked(world, tmp_path, attacks.flows_absurd_values)
    assert a.flows is not None and a.flows.counts.malformed == clean[1].flows.counts.malformed + 3  # type: ignore
    assert a.flows.counts.job == clean[1].flows.counts.job  # type: ignore[union-attr]
    assert any("(3x)" in n for n in _named(d, rel))
    assert (d.fault, d.faulty_hosts) == (clean[0].fault, clean[0].faulty_hosts) and not a.incomplete


@pytest.mark.parametrize("attack", [attacks.flows_parquet_ns_utc, attacks.flows_parquet_string_numbers])
def test_parquet_flows_with_pandas_timestamps_or_text_numbers_are_read_whole(world, clean, tmp_path,
                                                                             attack) -> None:
    rel, d, a = _attacked(world, tmp_path, attack)
    assert a.flows is not None and a.flows.counts.job == clean[1].flows.counts.job  # type: ignore[union-attr]
    assert a.flows.iterations.count == clean[1].flows.iterations.count  # type: ignore[union-attr]
    assert not _named(d, rel) and not a.incomplete


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("tz", [None, "UTC", "America/New_York"])
def test_every_arrow_timestamp_unit_and_zone_reads_as_epoch_seconds(tmp_path: Path, unit: str, tz: str | None) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from diagagent.telemetry.readers import iter_flow_batches

    scale = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    start = [1_795_161_600 * scale + 7, 1_795_161_601 * scale]  # 7 ticks of the unit: pandas' ns are not whole us
    table = pa.table({"start": pa.array(start, pa.timestamp(unit, tz=tz)),
                      "end": pa.array([s + scale for s in start], pa.timestamp(unit, tz=tz)),
                      "src_ip": ["10.0.0.1", "10.0.0.2"], "dst_ip": ["10.0.0.2", "10.0.0.1"], "bytes": [1, 2]})
    pq.write_table(table, tmp_path / "f.parquet")
    issues: list = []
    [batch] = iter_flow_batches(tmp_path / "f.parquet", "flows/f.parquet", issues)
    assert batch.column("start").to_pylist() == pytest.approx([1_795_161_600 + 7 / scale, 1_795_161_601.0],
                                                              abs=1e-6, rel=0)
    assert not issues


def test_a_parquet_column_of_the_wrong_type_skips_the_file_with_a_named_error(world, clean, tmp_path) -> None:
    rel, d, a = _attacked(world, tmp_path, attacks.flows_parquet_wrong_types)
    note = _named(d, rel)[0]
    assert "column bytes holds list" in note and "expected numbers" in note
    assert a.flows is not None and not a.incomplete  # the analyzer ran and said it had no flows
    assert (d.fault, d.faulty_hosts) == (clean[0].fault, clean[0].faulty_hosts)


def test_a_rank_number_too_large_for_any_array_is_refused_with_its_key_and_line(world, tmp_path) -> None:
    # it was an OverflowError in the flows analyzer, which dropped it and changed the faulty node; job.yaml's
    # limits now refuse it before any analyzer runs, naming the file, the line and the key
    with pytest.raises(BundleError, match=r"job\.yaml:\d+: key 'nodes\.0\.ranks': rank .*\(limits\.max_ranks"):
        _attacked(world, tmp_path, attacks.job_huge_rank)


# --- an analyzer that still breaks ---------------------------------------------------------------------------


def test_an_analyzer_that_breaks_is_named_and_lowers_the_confidence(world, clean, tmp_path, monkeypatch) -> None:
    from diagagent.analysis import flows
    from diagagent.diagnosis.analyses import INCOMPLETE_CONFIDENCE

    def broken(*args: object, **kwargs: object) -> None:  # stands in for a bug no input of ours triggers any more
        raise ValueError("a bug")

    monkeypatch.setattr(flows, "analyze_flows", broken)
    _, d, a = _attacked(world, tmp_path, lambda root: "")
    assert a.incomplete == ["flows"] and a.flows is None
    assert any(n.startswith("the flows analyzer failed (ValueError: a bug)") and "lower confidence" in n
               for n in d.notes)
    assert (d.fault, d.faulty_hosts) == (clean[0].fault, clean[0].faulty_hosts)
    assert d.confidence == pytest.approx(clean[0].confidence * INCOMPLETE_CONFIDENCE, abs=1e-3)


def test_memory_error_is_not_swallowed(world, tmp_path, monkeypatch) -> None:
    from diagagent.analysis import stacks

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(stacks, "analyze_stacks", exhausted)
    with pytest.raises(MemoryError):
        _attacked(world, tmp_path, lambda root: "")


def test_the_time_budget_stops_each_analyzer_after_its_first_file_and_says_so(world, clean, tmp_path) -> None:
    settings = world[1].model_copy(update={"analyzer_budget_s": 0.0})
    _, d, a = _attacked(world, tmp_path, lambda r: "", settings)
    assert a.stacks is not None and a.stacks.files == 1  # of 8
    assert a.health is not None and a.health.files == 1  # of 24
    for name in ("logs", "stacks", "health"):
        assert any(n.startswith(f"the {name} analyzer ran out of its 0 s budget") and "left unread" in n
                   for n in d.notes), name
    assert set(a.incomplete) >= {"logs", "stacks", "health"}
    assert d.confidence < clean[0].confidence


# --- the agent's flow_timeline tool --------------------------------------------------------------------------


def test_flow_timeline_bounds_the_range_the_model_asks_for(world) -> None:
    from diagagent.agent.context import ToolContext
    from diagagent.agent.tools import flow_timeline

    root, settings = world
    with Bundle.open(root) as bundle:
        ctx = ToolContext(bundle, settings)
        out = flow_timeline(ctx, first=0, last=10**18)  # before: a list of 10**18 ints was built first
        assert 0 < len(out["spans"]) <= 200 and all(len(row["iterations"]) <= 200 for row in out["nodes"])
        assert flow_timeline(ctx, first=-10**18, last=10**18).get("spans", []) == []
