"""Ask only what changes the answer (issue 18): before a question is asked, the plan is evaluated for every value the
question offers; a question is asked only when the pick differs, otherwise the bot answers at once, says what it
assumed and offers the other values as buttons."""
from __future__ import annotations

import pytest

ASKED = ["fine-tune qwen2.5 7b", "微调 Qwen2.5-32B", "finetune llama 3.1 70b on our data", "lora or full fine-tune of qwen2.5 72b?"]
NOT_ASKED = ["fine-tune bert-base for classification", "finetune whisper-small on my data", "微调 bert-base 做文本分类",
             "train yolov8"]


def values_of(core, reply, state):
    """The slots each answer to the question would set (what the question offers)."""
    slot = reply.missing[0]
    if slot == "method":
        return [{"method": m} for m in ("lora", "qlora", "full")]
    return [{"model": c, "params_b": core.kb.models[c].params_b} for c in state["candidates"]]


def picks(core, intent, slots, values):
    out = set()
    for extra in values:
        advice = core.advisor.advise(intent, {**slots, **extra}, {}, "en")
        top = advice.recommendations[0] if advice.recommendations else {}
        out.add((top.get("provider"), top.get("flavor"), top.get("instances")))
    return out


@pytest.mark.parametrize("text", ASKED)
def test_a_question_is_asked_only_when_the_pick_differs(core, text):
    reply, state = core.turn(text)
    if reply.status != "follow_up" or reply.missing not in (["method"], ["model"]):
        pytest.skip(f"no method/model question for {text!r}: {reply.status} {reply.missing}")
    if reply.missing == ["model"] and not state.get("candidates"):
        pytest.skip("an open 'which model?' has no values to enumerate")
    assert len(picks(core, reply.intent, reply.slots, values_of(core, reply, state))) > 1, text


@pytest.mark.parametrize("text", NOT_ASKED)
def test_no_question_when_the_answer_would_not_change(core, text):
    reply, _ = core.turn(text)
    assert reply.status == "answer", (text, reply.status, reply.text)
    assert reply.choices, "the other values are offered as buttons"
    assert any(c in reply.assumptions[0] for c in reply.choices), reply.assumptions


def test_the_method_question_is_still_asked_for_a_7b_model(core):
    reply, _ = core.turn("fine-tune qwen2.5 7b")
    assert reply.status == "follow_up" and reply.missing == ["method"]


def test_the_assumption_is_stated_in_the_reply_language(core):
    en, _ = core.turn("fine-tune bert-base for classification")
    zh, _ = core.turn("微调 bert-base 做文本分类")
    assert "the pick is the same" in en.text + en.details and "推荐结果相同" in zh.text + zh.details


def test_generations_of_one_architecture_are_not_asked_apart():
    """'deepseek 671b': V3, R1, V3.1 and V3.2 share one architecture (671B, 61 layers, MLA, FP8), so which one the
    user means changes no number: the answer is given, saying it is the same for each. Llama 2 / 3 / 3.1 70B differ
    (context, vocabulary, GQA) and are still asked apart."""
    from bot.conversation.turn import Core
    core = Core.load()
    reply, _ = core.turn("serve deepseek 671b for 20 users", {})
    assert reply.status == "answer", reply.text
    assert any("DeepSeek-R1" in a or "deepseek-r1" in a.lower() for a in reply.assumptions), reply.assumptions
    reply, _ = core.turn("serve llama 70b for 20 users", {})
    assert reply.status == "follow_up"
