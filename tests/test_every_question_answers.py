"""Every question we hold (the labelled, held-out and real sets, the planner scenarios) goes through the whole
turn without an exception, and a follow-up answered with its first quick reply goes on to an answer or another
question: a realistic question ('need to finetune mistral 7b, budget 500 dollars total, 1B tokens') once crashed the
CLI on a card whose figures were not on file. The answers also never print an impossible inequality
('does not fit (78.0 > 80 GiB)')."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).parent
STATUSES = {"answer", "follow_up", "info", "clarify", "off_topic", "reset", "error", "invalid"}
# "a > b GiB" where a is not above b: a line that contradicts itself
INEQUALITY = re.compile(r"(\d+(?:\.\d+)?) > (\d+(?:\.\d+)?) GiB")


def _questions() -> list[str]:
    out: list[str] = []
    for name in ("questions.yaml", "heldout.yaml", "real.yaml"):
        data = yaml.safe_load((HERE / "nlu" / name).read_text(encoding="utf-8"))
        rows = data if isinstance(data, list) else next(v for v in data.values() if isinstance(v, list))
        out += [r["text"] for r in rows if isinstance(r, dict) and r.get("text")]
    scen = yaml.safe_load((HERE / "scenarios" / "planner.yaml").read_text(encoding="utf-8"))
    rows = scen if isinstance(scen, list) else next(v for v in scen.values() if isinstance(v, list))
    out += [r["q"] for r in rows if isinstance(r, dict) and r.get("q")]
    return out


QUESTIONS = _questions()


@pytest.fixture(scope="module")
def core():
    from bot.conversation.turn import Core
    return Core.load()


def test_the_sets_are_there():
    assert len(QUESTIONS) > 600


@pytest.mark.parametrize("chunk", range(8))
def test_every_question_gets_a_reply(core, chunk):
    bad = []
    for q in QUESTIONS[chunk::8]:
        try:
            reply, state = core.turn(q, {})
            if reply.status == "follow_up" and reply.choices:
                reply, state = core.turn(reply.choices[0], state)
        except Exception as e:                      # noqa: BLE001 - the point is to list every one
            bad.append(f"{q!r}: {type(e).__name__}: {e}")
            continue
        if not reply.text.strip():
            bad.append(f"{q!r}: empty reply")
        for a, b in INEQUALITY.findall(reply.text):
            if float(a) <= float(b):
                bad.append(f"{q!r}: '{a} > {b} GiB'")
    assert not bad, "\n".join(bad)
