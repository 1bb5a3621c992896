"""The chat's answers (issue 18, item 11): telemetry shown as written, a 'why' that explains instead of repeating the
summary, and every part of a question answered."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from diagagent.agent import Session
from diagagent.agent.playbook import code, plain, summary
from diagagent.apps.slack.blocks import mrkdwn_from_markdown
from diagagent.config import Settings
from diagagent.telemetry import Bundle

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "job-42"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    state = tmp_path_factory.mktemp("state")
    with Bundle.open(EXAMPLE) as bundle:
        yield Session(bundle, Settings.load(state_dir=state), use_llm=False)


def _inline(markdown: str) -> tuple[str, set[str]]:
    """What the TUI's Markdown widget (markdown-it, "gfm-like") shows as text, and the inline token types it makes."""
    text, kinds = [], set()
    for block in MarkdownIt("gfm-like").parse(markdown):
        for tok in block.children or []:
            kinds.add(tok.type)
            if tok.type in ("text", "code_inline"):
                text.append(tok.content)
    return "".join(text), kinds


def test_templates_in_answers_render_as_written(session: Session) -> None:
    d = session.diagnose()
    for question in ("which nodes?", "is node-004 ok?"):
        shown, kinds = _inline(session.ask(question).markdown)
        assert "(PCI:<*>): <*>, pid=<*>, name=<*>" in shown, question  # was '(PCI:<>): <>, pid=<>...' in italics
        assert "em_open" not in kinds and "html_inline" not in kinds, question
    shown, _ = _inline(summary(d))
    assert "logs/node-013/rank-59.log:48" in shown


def test_plain_and_code_keep_hostile_text_literal() -> None:
    for text in ("<*> *x* _y_ [a](http://e) `b` <b>c</b> # h | t ~~s~~ \\*", "``a`b``", "`edge`"):
        shown, kinds = _inline(f"- {plain(text)} and {code(text)}")
        assert shown.count(text) == 2, (text, shown)
        # (a bare URL is still linkified, its text as written: the chat never opens links)
        assert not kinds & {"em_open", "strong_open", "html_inline", "s_open"}, text
    assert mrkdwn_from_markdown(plain("Xid <*>, pid=<*>")) == "Xid &lt;∗&gt;, pid=&lt;∗&gt;"


def test_why_explains_the_chain_instead_of_repeating_the_summary(session: Session) -> None:
    d = session.diagnose()
    why = session.ask("Why did it fail?").markdown
    assert why != summary(d) and "Evidence:" not in why and "Proposed" not in why
    shown, _ = _inline(why)
    assert "First sign on node-013 at 15:41:35 UTC" in shown and "logs/node-013/kern.log:1" in shown
    assert "the cascade, not the cause" in shown and "on 7/8 nodes" in shown  # the watchdog timeouts on the peers
    assert "gpu-ecc-dbe-xid48" in shown and "How sure: 92%" in shown


def test_a_two_part_question_gets_both_parts(session: Session) -> None:
    both = session.ask("which nodes failed and what should we do?").markdown
    assert "Faulty nodes, most suspect first" in both and "Proposed actions" in both
    assert both.index("Faulty nodes") < both.index("Proposed actions")  # in the order asked
    when = session.ask("when did it start, and which nodes?").markdown
    assert "first abnormal iteration **4235**" in when and "Faulty nodes" in when
    assert "First sign on node-013 at 15:41:35 UTC" in _inline(when)[0]
    why_not = session.ask("why not node-004?").markdown  # one part: the node, not the general why as well
    assert "node-004 is not named faulty" in why_not and "How sure" not in why_not


def test_the_answer_on_actions_says_each_proposals_ledger_state(tmp_path: Path) -> None:
    """Issue 18 item 2: the chat said "each pending an authorized operator's approval" of actions already
    approved or rejected; it now says what the ledger has for each (pending with the approve command, decided by
    whom and why, or not recorded), in a real SQLite ledger."""
    from diagagent.actions import Ledger

    cfg = Settings.load(state_dir=tmp_path / "state", approvers=["alice"])
    with Bundle.open(EXAMPLE) as bundle:
        session = Session(bundle, cfg, use_llm=False)
        d = session.diagnose()
        assert len(d.proposals) >= 2
        before = session.ask("what should we do?").markdown
        assert "pending an authorized operator" not in before
        assert "not recorded in the ledger, so nothing has run" in before
        assert not (tmp_path / "state" / "ledger.sqlite").exists()  # asking never creates the ledger
        ledger = Ledger.from_settings(cfg)
        first, second = (ledger.submit(d.job_id, p, "bob", job=bundle.job, evidence=d.evidence)
                         for p in d.proposals[:2])
        ledger.reject(first.id, "alice", "the probes disagree")
        answer = session.ask("what should we do?").markdown
    assert "as the ledger has them now" in answer
    assert f"**#{first.id} rejected** by alice: the probes disagree" in answer
    assert f"**#{second.id} pending**, awaiting an authorized operator (`diagagent actions approve {second.id}`)" \
        in answer
    assert f"approve {first.id}`" not in answer  # no approve hint for a decided action
    shown = summary(d, [ledger.find(d.job_id, p) for p in d.proposals])
    assert "rejected" in shown and "pending an operator's approval" not in shown
