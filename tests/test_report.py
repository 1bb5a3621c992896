"""Reports (`diagagent diagnose --report`): HTML escaping and self-containment, pictures, Markdown with linked PNGs,
bundles with nothing but job.yaml, unsupported suffixes, and pictures that fail without failing the report."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from diagagent.apps.report import UnsupportedReportFormat, write_report
from diagagent.apps.report.content import where
from diagagent.apps.report.figures import Mark, cascade
from diagagent.apps.report.markdown import code, fenced, figures_dir, text
from diagagent.contract import ActionProposal, Evidence, NodeScore, SchemaMatch
from diagagent.diagnosis import Diagnosis
from diagagent.diagnosis.analyses import Analyses
from diagagent.telemetry import Bundle
from tests.conftest import JOB_YAML

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
HOSTILE = "<script>alert('pwned')</script><img src=https://evil.example/x.png onerror=alert(1)>"


class _Refs(HTMLParser):
    """Every tag and every URL-bearing attribute of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "srcset", "action", "poster", "data") and value is not None:
                self.urls.append((tag, name, value))


def _refs(page: str) -> _Refs:
    parser = _Refs()
    parser.feed(page)
    return parser


def _data_pngs(page: str) -> dict[str, bytes]:
    """The embedded pictures by figure id."""
    found = re.findall(
        r'<figure id="fig-(\w+)"><img alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page
    )
    return {key: base64.b64decode(b64) for key, b64 in found}


# --- a hand-written bundle with hostile text ------------------------------------------------------------------


@pytest.fixture
def hostile_bundle(small_bundle: Path) -> Path:
    log = small_bundle / "logs" / "node-002" / "stdout.log"
    log.write_text(
        "[2026-11-20 10:00:50,000] [INFO] step ok\n"
        f"[2026-11-20 10:00:57,000] [INFO] user data {HOSTILE}\n"
        "[2026-11-20 10:00:58,000] [ERROR] RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
        "[2026-11-20 10:00:59,000] [INFO] after ``` fence\n"
    )
    return small_bundle


def _log_evidence(eid: str, role: str, file: str, line: int, text: str, **more: object) -> Evidence:
    return Evidence.model_validate(
        {
            "id": eid,
            "kind": "log",
            "role": role,
            "file": file,
            "line": line,
            "host": "node-002",
            "text": text,
            **more,
        }
    )


def _hostile_diagnosis() -> Diagnosis:
    log = "logs/node-002/stdout.log"
    ecc = "RuntimeError: CUDA error: uncorrectable ECC error encountered"
    cause = _log_evidence("e1", "cause", log, 3, ecc, why=f"why {HOSTILE}", ts=1795168858.0)
    hostile = _log_evidence("e2", "symptom", log, 2, HOSTILE, ts=1795168857.0)
    escape = _log_evidence("e3", "cause", "../../../etc/passwd", 1, "root:x:0:0")  # a path out of the bundle
    return Diagnosis(
        job_id="42",
        status="failed",
        category="hardware",
        fault="gpu_ecc_uncorrectable",
        confidence=0.7,
        root_cause=f"ECC on node-002 {HOSTILE}",
        stage="training",
        iteration=101,
        faulty_nodes=[NodeScore(host="node-002", score=0.9, reason=f"reason {HOSTILE}", evidence=["e1"])],
        evidence=[cause, hostile, escape],
        schemata=[
            SchemaMatch(
                schema_id="gpu-ecc-dbe-xid48",
                title=f"title {HOSTILE}",
                score=0.61,
                similarity=0.4,
                template_overlap=0.5,
            )
        ],
        proposals=[
            ActionProposal(
                kind="evict",
                nodes=["node-002"],
                reason=f"evict {HOSTILE}",
                evidence=["e1"],
                warnings=[f"warning {HOSTILE}"],
            )
        ],
        notes=[f"note {HOSTILE}"],
    )


def test_html_escapes_hostile_text_and_loads_nothing(hostile_bundle: Path, tmp_path: Path) -> None:
    with Bundle.open(hostile_bundle) as bundle:
        out = write_report(_hostile_diagnosis(), bundle, tmp_path / "r.html")
    page = out.read_text()
    refs = _refs(page)
    assert "script" not in refs.tags and refs.tags.count("img") == len(_data_pngs(page))
    assert "<script" not in page.lower() and "onerror=alert" not in page.replace("onerror=alert(1)&gt;", "")
    assert page.count("&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;") >= 7  # every field, as text
    for tag, attr, url in refs.urls:  # only anchors inside the page and embedded images
        assert url.startswith(("#", "data:image/png;base64,")), (tag, attr, url)
    own = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "data:", page)
    tags = re.findall(r"<[a-zA-Z][^>]*>", own)  # telemetry's "<" is escaped, so these are the page's own tags
    assert not [t for t in tags if re.search(r"https?:|//", t, re.IGNORECASE)]
    assert not re.search(r"url\(|@import|<link|<iframe|<object|<embed", page, re.IGNORECASE)
    assert "default-src 'none'" in page  # a CSP forbids scripts and remote loads even if escaping failed


def test_html_shows_each_cited_line_in_context_and_refuses_paths_outside(
    hostile_bundle: Path, tmp_path: Path
) -> None:
    d = _hostile_diagnosis()
    with Bundle.open(hostile_bundle) as bundle:
        page = write_report(d, bundle, tmp_path / "r.html").read_text()
    for e in d.evidence:
        assert where(e) in page, e.id
    block = page[page.index('id="ev-e1"') : page.index('id="ev-e2"')]
    hits = re.findall(r'<span class="l hit"><span class="n">([^<]*)</span>([^<]*)</span>', block)
    assert len(hits) == 1 and hits[0][0].startswith("▶3") and hits[0][1].endswith("ECC error encountered")
    assert "step ok" in block and "after ``` fence" in block  # lines around it
    outside = page[page.index('id="ev-e3"') :]
    assert "root:x:0:0" in outside and 'class="l hit"' not in outside.split("</div></div>")[0]
    assert "cited line(s) not found in the bundle, shown without context: e3 (../../../etc/passwd:1)" in page
    assert "Not recorded in the Ledger" in page and "0.61" in page and "gpu-ecc-dbe-xid48" in page


def test_markdown_escapes_and_fences_hostile_text(hostile_bundle: Path, tmp_path: Path) -> None:
    with Bundle.open(hostile_bundle) as bundle:
        md = write_report(_hostile_diagnosis(), bundle, tmp_path / "r.md").read_text()
    outside_fences = re.sub(r"(?ms)^(`{3,})text\n.*?\n\1$", "", md)
    assert "<script" not in outside_fences and "&lt;script&gt;" in outside_fences
    assert "````text" in md  # the cited file holds a ``` line, so its fence is longer
    assert "logs/node-002/stdout.log:3" in md and "▶3  [2026-11-20 10:00:58,000]" in md


def test_markdown_helpers_neutralize_syntax() -> None:
    assert text("# *bold* [x](http://a) | <b> & `c`") == (
        r"\# \*bold\* \[x\](http://a) \| &lt;b&gt; &amp; \`c\`"
    )
    assert text("- item\nnext") == r"\- item next"
    assert code("a ``b`` c") == "```a ``b`` c```"
    body = "x\n```\ny"
    assert fenced(body).startswith("````text\n") and fenced(body).endswith("\n````")


# --- a simulated bundle with logs, flows and stacks -----------------------------------------------------------


@pytest.fixture(scope="module")
def hung_job(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Bundle, Analyses, Diagnosis]]:
    from diagagent.diagnosis import diagnose
    from diagagent.sim import simulate

    root = tmp_path_factory.mktemp("hung")
    with pytest.MonkeyPatch.context() as mp:  # module scope: isolate settings here as conftest does per test
        mp.setenv("DIAGAGENT_STATE_DIR", str(root / "state"))
        mp.setenv("DIAGAGENT_CONFIG", str(root / "absent.toml"))
        for var in ("DIAGAGENT_LLM_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "DIAGAGENT_CHROMA_URL"):
            mp.delenv(var, raising=False)
        simulate(root / "bundle", "gpu_hang", 4, 1, gpus_per_node=2, minutes=8)
        with Bundle.open(root / "bundle") as bundle:
            analyses = Analyses(bundle)
            d = diagnose(bundle, analyses.settings, analyses=analyses)
            yield bundle, analyses, d


def test_html_embeds_all_three_pictures(hung_job: tuple[Bundle, Analyses, Diagnosis], tmp_path: Path) -> None:
    bundle, analyses, d = hung_job
    assert bundle.has("flows") and bundle.has("stacks") and bundle.has("logs")
    page = write_report(d, bundle, tmp_path / "hung.html", analyses=analyses).read_text()
    pngs = _data_pngs(page)
    assert set(pngs) == {"heatmap", "stacks", "timeline"}
    assert all(png.startswith(PNG_MAGIC) and len(png) > 5000 for png in pngs.values())
    assert "not shown" not in page
    causes = [e for e in d.evidence if e.role == "cause"]
    assert causes and all(where(e) in page for e in causes)
    outliers = [c for c in analyses.stacks.clusters if c.role == "outlier"]  # type: ignore[union-attr]
    assert outliers and all(c.stack[0].function in page for c in outliers)  # the clusters' top frames
    assert "Eviction set:" in page


def test_a_hang_timeline_shows_the_stuck_node_ahead_of_unrelated_warnings(
    hung_job: tuple[Bundle, Analyses, Diagnosis], tmp_path: Path
) -> None:
    """Issue 18 item 13: on a hang the timeline showed only start-up and storage warnings and missed the stuck
    node; now the stuck node heads the rows, with the last progress and the silence, and the rest is grey."""
    import io

    import matplotlib

    from diagagent.apps.report.figures import timeline_view

    bundle, analyses, d = hung_job
    assert bundle.truth is not None
    stuck = bundle.truth.faulty_nodes[0]
    silence = analyses.flows.silence  # type: ignore[union-attr]
    assert silence.stopped and silence.silent_for_s
    caption, fig = timeline_view(d, analyses)
    assert caption.startswith(f"The hang first: {stuck} stuck (rank")
    assert f"then {silence.silent_for_s:.0f} s of silence" in caption
    ax = fig.axes[0]
    assert ax.get_yticklabels()[0].get_text() == f"{stuck} stuck"  # the stuck node heads the rows
    assert f"{stuck} stuck" in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    hang_first = ("silence:", "last progress:", f"stuck (stacks): {stuck}")
    assert [any(lab.startswith(h) for lab in labels[:3]) for h in hang_first] == [True] * 3, labels
    assert not any(lab.startswith("cause (warning)") for lab in labels), labels  # no warning posing as the cause
    assert any(lab.startswith("other warnings (not the hang)") for lab in labels), labels
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        buf = io.StringIO()
        fig.savefig(buf, format="svg")
    svg = buf.getvalue()
    assert f"{stuck} stuck" in svg and "last progress: iteration" in svg
    page = write_report(d, bundle, tmp_path / "hung.html", analyses=analyses).read_text()
    assert "The hang first: " + stuck in page


def test_a_crash_timeline_has_no_hang(crashed_job: tuple[Bundle, Analyses]) -> None:
    from diagagent.apps.report.figures import timeline_view
    from diagagent.apps.report.onset import hang_of

    bundle, analyses = crashed_job
    d = Diagnosis(job_id=bundle.job.job_id, status="failed", fault="gpu_ecc_uncorrectable")
    assert hang_of(d, analyses) is None
    caption, fig = timeline_view(d, analyses)
    assert caption.startswith("Failure-indicating lines") and "stuck" not in fig.axes[0].get_title()


def test_a_slow_job_timeline_shows_the_slow_node_and_the_step_up(tmp_path: Path) -> None:
    """A straggler's timeline showed five start-up warnings as causes and never the slow node; now the node whose
    own step grew heads the rows, with the moment the job's iteration time stepped up (from the flows)."""
    from diagagent.apps.report.figures import timeline_view
    from diagagent.diagnosis import diagnose
    from diagagent.sim import simulate

    simulate(tmp_path / "slow", "gpu_straggler", 4, 7, gpus_per_node=2, minutes=8)
    with Bundle.open(tmp_path / "slow") as bundle:
        analyses = Analyses(bundle)
        d = diagnose(bundle, analyses.settings, analyses=analyses)
        assert bundle.truth is not None and analyses.flows.slowdown is not None  # type: ignore[union-attr]
        slow = bundle.truth.faulty_nodes[0]
        caption, fig = timeline_view(d, analyses)
    assert caption.startswith(f"The slowdown first: {slow} slow (its own step")
    ax = fig.axes[0]
    assert ax.get_yticklabels()[0].get_text() == f"{slow} slow"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("slow") and any(lab == f"slow (flows): {slow}" for lab in labels[:3]), labels
    assert not any(lab.startswith("cause (warning)") for lab in labels), labels


def test_markdown_writes_linked_pngs_beside_it(
    hung_job: tuple[Bundle, Analyses, Diagnosis], tmp_path: Path
) -> None:
    bundle, analyses, d = hung_job
    (tmp_path / "hung report_files").mkdir()
    (tmp_path / "hung report_files" / "stale.txt").write_text("kept")
    out = write_report(d, bundle, tmp_path / "hung report.md", analyses=analyses)
    md = out.read_text()
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert [Path(link).name for link in links] == ["heatmap.png", "stacks.png", "timeline.png"]
    for link in links:
        assert not link.startswith(("/", "http")) and " " not in link  # relative and URL-safe
        png = out.parent / link.replace("%20", " ")
        assert png.parent == figures_dir(out) and png.read_bytes().startswith(PNG_MAGIC)
    assert (figures_dir(out) / "stale.txt").read_text() == "kept"
    assert "Not recorded in the Ledger" in md


def test_a_picture_that_fails_is_noted_not_fatal(
    hung_job: tuple[Bundle, Analyses, Diagnosis], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from diagagent.apps.report import figures

    def boom(*_: object, **__: object) -> bytes:
        raise RuntimeError("matplotlib <exploded>")

    monkeypatch.setattr(figures, "stack_clusters_png", boom)
    bundle, analyses, d = hung_job
    page = write_report(d, bundle, tmp_path / "r.html", analyses=analyses).read_text()
    assert set(_data_pngs(page)) == {"heatmap", "timeline"}
    assert (
        "Stack clusters</b>: not shown: could not be drawn (RuntimeError: matplotlib &lt;exploded&gt;)"
        in page
    )


def test_cli_diagnose_writes_the_report(
    hung_job: tuple[Bundle, Analyses, Diagnosis], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from diagagent.apps import report
    from diagagent.apps.cli import build_app

    seen: dict[str, object] = {}
    real = report.write_report

    def spy(d: Diagnosis, bundle: Bundle, out: Path, *, analyses: Analyses | None = None, **kw: object) -> Path:
        seen["analyses"] = analyses
        return real(d, bundle, out, analyses=analyses, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(report, "write_report", spy)
    out = tmp_path / "cli.html"
    result = CliRunner().invoke(
        build_app(), ["diagnose", str(hung_job[0].root), "--no-submit", "--report", str(out)]
    )
    assert result.exit_code == 0, result.output
    reused = seen["analyses"]  # the session's Analyses, not a second run of the analyzers
    assert isinstance(reused, Analyses) and reused.logs is not None
    assert set(_data_pngs(out.read_text())) == {"heatmap", "stacks", "timeline"}


# --- what is missing, and what is refused ---------------------------------------------------------------------


def test_bundle_with_only_job_yaml_says_what_is_missing(tmp_path: Path) -> None:
    from diagagent.diagnosis import diagnose

    root = tmp_path / "bare"
    root.mkdir()
    (root / "job.yaml").write_text(JOB_YAML)
    with Bundle.open(root) as bundle:
        analyses = Analyses(bundle)
        d = diagnose(bundle, analyses.settings, analyses=analyses)
        page = write_report(d, bundle, tmp_path / "bare.html", analyses=analyses).read_text()
        md = write_report(d, bundle, tmp_path / "bare.md", analyses=analyses).read_text()
    assert "<img" not in page and "![" not in md and not figures_dir(tmp_path / "bare.md").exists()
    for doc in (page, md):
        assert "Job 42 (failed): diagnosis report" in doc
        assert "not shown: no network flows in this bundle" in doc
        assert "not shown: no stack dumps in this bundle" in doc
        assert "not shown: no logs in this bundle, and no cited evidence has a time" in doc
        for missing in ("no logs:", "no network flows:", "no stack dumps:", "no health probes:"):
            assert missing in doc


def test_events_without_time_are_skipped_and_said(small_bundle: Path, tmp_path: Path) -> None:
    d = Diagnosis(job_id="42", status="failed")
    with Bundle.open(small_bundle) as bundle:  # the ECC exception and NCCL WARN print no time; the Xid line and the
        page = write_report(d, bundle, tmp_path / "some.html").read_text()  # peer's watchdog do
    assert "timeline" in _data_pngs(page) and "2 of 4 event(s) printed no time and are not shown" in page
    (small_bundle / "logs" / "node-001" / "rank-0.log").unlink()  # the lines that print a time, gone
    log = small_bundle / "logs" / "node-002" / "stdout.log"
    log.write_text("".join(line for line in log.read_text().splitlines(keepends=True) if "kernel:" not in line))
    with Bundle.open(small_bundle) as bundle:
        page = write_report(d, bundle, tmp_path / "none.html").read_text()
    assert "timeline" not in _data_pngs(page)
    assert (
        "Event timeline across nodes</b>: not shown: none of the 2 failure-indicating event(s) printed a time"
        in page
    )


@pytest.mark.parametrize("name", ["report.pdf", "report", "report.html.txt"])
def test_unsupported_suffix_is_a_clear_error(small_bundle: Path, tmp_path: Path, name: str) -> None:
    with Bundle.open(small_bundle) as bundle, pytest.raises(UnsupportedReportFormat) as err:
        write_report(Diagnosis(job_id="42"), bundle, tmp_path / name)
    assert isinstance(err.value, ValueError)
    assert name in str(err.value) and ".html" in str(err.value) and ".md" in str(err.value)
    assert not (tmp_path / name).exists()


def test_cascade_is_the_moment_symptoms_reach_most_nodes() -> None:
    marks = [
        Mark(0.0, "node-3", "cause", "Xid 48"),
        Mark(1.0, "node-3", "symptom", "ChildFailedError"),  # the root's own exit: one node
        Mark(300.0, "node-1", "symptom", "read retry"),
        Mark(600.0, "node-1", "symptom", "watchdog"),
        Mark(601.0, "node-2", "symptom", "watchdog"),
        Mark(630.0, "node-4", "symptom", "watchdog"),
        Mark(700.0, "node-5", "symptom", "watchdog"),
    ]
    assert cascade(marks, 0.0) == (600.0, 3)
    assert cascade(marks[:3], 0.0) is None  # 1 s and 300 s are not within a minute of each other
    assert cascade([*marks[:2], Mark(30.0, "node-1", "symptom", "watchdog")], 0.0) == (1.0, 2)
    assert cascade(marks, 650.0) is None  # one node after that


# --- the timeline's other nodes -------------------------------------------------------------------------------


def test_template_matcher_finds_the_line_behind_a_template() -> None:
    from diagagent.apps.report.occurrences import template_matcher

    m = template_matcher(0, "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=<*>, OpType=<*>")
    assert m is not None and m.anchor == "WorkNCCL(SeqNum="
    line = (
        "[rank3]:[E1120 10:01:02.1 ProcessGroupNCCL.cpp:683] Watchdog caught  collective operation timeout: "
    )
    assert m.pattern.search(line + "WorkNCCL(SeqNum=78, OpType=ALLREDUCE, NumelIn=80)")
    assert not m.pattern.search(line.replace("Watchdog", "Watchcat") + "WorkNCCL(SeqNum=78, OpType=X")
    assert template_matcher(0, "<*> <*>: ok") is None  # nothing distinctive to look for


@pytest.fixture(scope="module")
def crashed_job(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Bundle, Analyses]]:
    from diagagent.sim import simulate

    root = tmp_path_factory.mktemp("crashed")
    simulate(root / "bundle", "gpu_ecc_uncorrectable", 4, 2, gpus_per_node=2, minutes=6)
    with pytest.MonkeyPatch.context() as mp, Bundle.open(root / "bundle") as bundle:
        mp.setenv("DIAGAGENT_STATE_DIR", str(root / "state"))
        mp.setenv("DIAGAGENT_CONFIG", str(root / "absent.toml"))
        analyses = Analyses(bundle)
        assert analyses.logs is not None
        yield bundle, analyses


def test_timeline_shows_the_cascade_on_the_other_nodes_minutes_after_the_cause(
    crashed_job: tuple[Bundle, Analyses],
) -> None:
    from diagagent.apps.report.figures import timeline_marks
    from diagagent.apps.report.occurrences import sightings

    bundle, analyses = crashed_job
    events = [e for e in analyses.logs.events if e.role in ("cause", "symptom")]  # type: ignore[union-attr]
    extra, not_read = sightings(bundle, events)
    assert not_read == "" and len({s.host for s in extra}) == 4
    marks, _ = timeline_marks(Diagnosis(job_id=bundle.job.job_id), events, extra)
    cause = min((m for m in marks if m.role == "cause" and m.severe), key=lambda m: m.ts)
    assert bundle.truth is not None and cause.host in bundle.truth.faulty_nodes
    burst = cascade(marks, cause.ts)
    assert (
        burst is not None and burst[1] >= 3 and burst[0] - cause.ts > 60
    )  # the peers' watchdogs, minutes later


def test_logs_too_large_to_read_again_are_said(
    crashed_job: tuple[Bundle, Analyses], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from diagagent.apps.report import occurrences

    monkeypatch.setattr(occurrences, "REREAD_BUDGET_BYTES", 1024)
    bundle, analyses = crashed_job
    page = write_report(Diagnosis(job_id="x"), bundle, tmp_path / "r.html", analyses=analyses).read_text()
    assert "timeline" in _data_pngs(page)
    assert "Not every node&#x27;s line is drawn: the logs (0 MB) are over 0 MB" in page
