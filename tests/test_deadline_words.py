"""Deadlines said the way people say them in chat: an explicit span beside a day word wins ('by tomorrow morning
(~12h)' is 12 hours, not a day), and a relaxed deadline said bare as what will do ('ok end of the week is fine too',
'eow works') re-plans the job: the first-run review found the first read as 24 h and the second answered with the
out-of-scope text (set5 s5-37)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.conversation.turn import Core


@pytest.fixture(scope="module")
def core():
    return Core.load()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hours=st.integers(3, 20), form=st.sampled_from(["(~{h}h)", "(about {h} hours)", "({h}h)", "（约 {h} 小时）",
                                                        "(~{h} hrs)"]),
       day=st.sampled_from(["by tomorrow morning", "by tomorrow", "明天早上之前", "明天之前"]))
def test_an_explicit_span_beside_a_day_word_is_the_deadline(core, hours, form, day):
    text = f"lora finetune qwen2.5-7b on 50k samples of 1k tokens, 2 epochs, need it {day} {form.format(h=hours)}"
    slots = core.parser.parse(text).slots
    assert slots.deadline_days is not None and abs(slots.deadline_days * 24 - hours) < 0.05, (text, slots.deadline_days)


@pytest.mark.parametrize("said", ["ok end of the week is fine too", "end of week works", "eow is ok",
                                  "end of the month would be fine", "end of next week is fine"])
def test_a_relaxed_deadline_said_bare_re_plans_the_job(core, said):
    _, state = core.turn("lora finetune gemma-2-9b on 120k examples of 700 tokens, 3 epochs, on gcp, need it in 12 hours",
                         {})
    reply, state2 = core.turn(said, state)
    assert reply.status != "out_of_scope", reply.text[:200]
    days = (state2.get("slots") or {}).get("deadline_days")
    assert days and days >= 1, (said, days)
    assert reply.targets and any(t.get("kind") == "deadline" or "deadline" in str(t) for t in reply.targets), \
        reply.text[:300]
