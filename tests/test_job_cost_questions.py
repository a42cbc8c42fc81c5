"""'How long and how much' for a named model's job with its work said is a question about that job's plan and cost,
not about how billing works: '用 whisper 转写 1 万小时录音，要多久、多少钱' was answered with the billing modes' text.
A billing word (spot, 包月, monthly) keeps it a billing question."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.conversation.turn import Core


@pytest.fixture(scope="module")
def core():
    return Core.load()


JOBS_ZH = ["用 whisper-large-v3 转写 {n} 万小时录音", "qwen2.5-7b 全参微调，{n} 亿 token", "用 sdxl 生成 {n} 万张图",
           "用 qwen2.5-7b 给 {n} 万条评论做摘要，每条 500 token"]
JOBS_EN = ["transcribe {n}0000 hours of audio with whisper large-v3", "full finetune qwen2.5-7b on {n}00M tokens",
           "generate {n}00k images with sdxl", "summarize {n}00k reviews of 500 tokens each with qwen2.5-7b"]
ASK_ZH = ["，要多久、多少钱？", "，大概多少钱", "，花多少钱多长时间"]
ASK_EN = [", how long and how much?", ", what would it cost?", " - cost and time?"]


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(i=st.integers(0, 3), n=st.integers(1, 5), a=st.integers(0, 2), lang=st.sampled_from(["en", "zh"]))
def test_cost_of_a_job_with_its_work_is_the_jobs_plan(core, i, n, a, lang):
    text = (JOBS_ZH[i] + ASK_ZH[a] if lang == "zh" else JOBS_EN[i] + ASK_EN[a]).format(n=n)
    parse = core.parser.parse(text)
    assert parse.intent in ("train", "finetune", "inference", "rendering"), (text, parse.intent, parse.intent_scores)
    r = core.turn(text, {})[0].model_dump()
    assert r["recommendations"] and any(rec.get("job_cost") for rec in r["recommendations"]), (text, r["text"][:300])


@pytest.mark.parametrize("text", [
    "用 whisper-large-v3 转写 1 万小时录音，用竞价实例划算吗",
    "transcribe 10000 hours of audio with whisper large-v3, is spot worth it?",
])
def test_a_billing_word_keeps_it_a_billing_question(core, text):
    assert core.parser.parse(text).intent in ("billing", "inference"), text
    r = core.turn(text, {})[0].model_dump()
    assert "spot" in r["text"].lower() or "竞价" in r["text"], r["text"][:300]
