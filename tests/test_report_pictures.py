"""The report's pictures, drawn and read back (issue 18, item 13): axes in training iterations, readable labels,
noise kept faint, the silence marked, and no label cut at the picture's edge. No browser needed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from diagagent.agent import Session
from diagagent.analysis.stacks import StackCluster
from diagagent.apps.report import figures
from diagagent.config import Settings
from diagagent.telemetry import Bundle

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "job-42"


@pytest.fixture(scope="module")
def job42(tmp_path_factory: pytest.TempPathFactory):
    cfg = Settings.load(state_dir=tmp_path_factory.mktemp("pictures"))
    with Bundle.open(EXAMPLE) as bundle:
        session = Session(bundle, cfg, use_llm=False)
        yield session.diagnose(), session.ctx.analyses


def test_heatmap_speaks_in_training_iterations_and_marks_the_silence(job42) -> None:
    diagnosis, analyses = job42
    from diagagent.analysis.flows import heatmap_figure

    caption, png = figures.heatmap_picture(analyses, diagnosis)
    assert png.startswith(b"\x89PNG") and "4235" in caption and "silent for 608 s" in caption
    tl = analyses.flows.node_timeline
    fig = heatmap_figure(analyses.flows, diagnosis.iteration - (tl.iterations - 1))
    top = fig.axes[0]
    lo, hi = top.get_xlim()
    assert lo < diagnosis.iteration < hi + 1 and lo > 1000  # the headline's iteration is on the axis
    assert top.get_xlabel() == "training iteration"
    assert min(t.get_fontsize() for t in top.get_yticklabels()) >= 9  # node labels readable (were 7 pt)
    vmin, vmax = top.images[0].get_clim()
    durations = np.asarray(top.images[0].get_array(), dtype=float)
    median = float(np.nanmedian(durations))
    assert vmin <= 0.86 * median and vmax >= 1.14 * median  # +-3% noise is a faint shade, not full-range stripes
    assert any("silent 608 s" in t.get_text() for t in top.texts)


def test_stack_cluster_labels_stay_inside_the_picture() -> None:
    long_frame = "torch/distributed/distributed_c10d.py:all_reduce_coalesced_with_a_very_long_name (x.py:1234)"
    clusters = [StackCluster(id=f"c{i}", signature=f"s{i}", role="healthy" if i == 0 else "outlier",
                             ranks=list(range(i * 8, i * 8 + (248 if i == 0 else 1))),
                             ranks_text=f"{i * 8}-{i * 8 + 247}" if i == 0 else str(i * 8), hosts=["node-001"],
                             samples=1, exact_signatures=1, top=long_frame, collective="nccl:all_reduce", stack=[],
                             files=[])
                for i in range(6)]
    fig = figures.stack_clusters_figure(clusters)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    ax = fig.axes[0]
    for label in [*ax.get_yticklabels(), *[t for t in ax.texts if t.get_visible()]]:
        extent = label.get_window_extent(renderer)
        if label in ax.texts:  # counts are clipped to the axes
            continue
        assert extent.x0 >= box.x0 - 1 and extent.x1 <= box.x1 + 1, label.get_text()


def test_a_thousand_node_job_keeps_its_pictures_labelled_and_the_faulty_node_named() -> None:
    """1,024 nodes: the heatmap had no node label at all and was 48 in tall; the timeline's cause row went
    unlabelled between the every-so-many labels."""
    from diagagent.analysis.flows import IterationSpan, NodeIteration, NodeRow, TimelineView, heatmap_figure

    hosts = [f"node-{i:04d}" for i in range(1, 1025)]
    rows = [NodeRow(host=h, iterations=[NodeIteration(iteration=i, start=i * 9.0, end=i * 9.0 + 9, duration_s=9.0,
                                                      compute_s=8.0, comm_s=1.0, compute_vs_peers=1.0)
                                        for i in range(3)]) for h in hosts]
    view = TimelineView(job_id="big", has_flows=True, count=3, nodes=rows,
                        spans=[IterationSpan(iteration=i, start=i * 9.0, end=i * 9.0 + 9, duration_s=9.0)
                               for i in range(3)])
    fig = heatmap_figure(view, 7811, highlight=["node-0750"])
    assert fig.get_figheight() <= 16.0  # two panels of at most 8 in (800 px each in the report)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert "* node-0750" in labels and 20 <= len(labels) <= 40
    marks = [figures.Mark(1000.0 + i, h, "symptom", "watchdog", True) for i, h in enumerate(hosts)]
    marks.append(figures.Mark(900.0, "node-0750", "cause", "Xid 48", True))
    tl = figures.timeline_figure(marks, hosts).axes[0]
    shown = {t.get_text(): t.get_color() for t in tl.get_yticklabels()}
    assert shown.get("node-0750") == figures.CAUSE_COLOR and len(shown) <= 70
