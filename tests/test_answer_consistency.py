"""The critic's consistency invariant over rendered answers (issue 29; set3 reviews: '超出 - GiB', 'FP8 -, NVLink -',
'cheaper' beside a dearer plan, CUDA advice on an Ascend plan, 'see below' over nothing).

bot/render/consistency.py checks every reply (tests/conftest.py fails any test whose reply breaks it; at run time
the line is left out). Here: table rows that each check finds what it must and nothing else, that the answer says
less rather than something false, and properties over GENERATED questions of every kind, both languages, on NVIDIA
and Ascend hardware.
"""
from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.records.models import AnswerView, ConsideredRow, ViewSection
from bot.render.consistency import PLACEHOLDER, drop, problems, text_problems


@functools.lru_cache(maxsize=1)
def _core():
    from bot.conversation.turn import Core
    return Core.load()


@pytest.mark.parametrize("line, bad", [
    ("超出 - GiB", True), ("about ? USD", True), ("FP8 -, NVLink -; inference", True), ("price None", True),
    ("{gpu} x 8", True), ("nan GiB", True), ("内存 ? GiB", True),
    ("p5s.40xlarge.12 - 8x NVIDIA H100 PCIe 80GB 80 GiB, 华为云 - 26.32 USD/小时", False),
    ("3 - 5 GiB per card", False), ("-5% off", False), ("Nonetheless fine", False), ("vLLM's --max-num-seqs", False),
])
def test_the_placeholder_check(line, bad):
    assert bool(PLACEHOLDER.search(line)) is bad, line


def _reply(recs, considered=(), lang="en"):
    return {"lang": lang, "recommendations": list(recs), "considered": list(considered)}


def _rec(label, flavor, gpu, hourly, hours=None, instances=1):
    return {"label": label, "flavor": flavor, "gpu": gpu, "price_per_hour": hourly, "hourly_total": hourly * instances,
            "instances": instances, "replicas": 1, "job_hours": hours, "currency": "USD",
            "job_cost": round(hourly * instances * hours, 2) if hours else None}


def test_cheapest_must_be_cheaper_and_costs_more_must_cost_more():
    kb = _core().kb
    view = AnswerView(headline="", sections=[ViewSection(key="pick", lines=["x"])])
    ok = _reply([_rec("pick", "a", "h100-sxm", 10, 2), _rec("cheapest", "b", "l40s", 2, 5)])
    assert not problems(view, ok, kb.gpus)
    bad = _reply([_rec("pick", "a", "h100-sxm", 10, 2), _rec("cheapest", "b", "l40s", 5, 10)])
    assert [p["check"] for p in problems(view, bad, kb.gpus)] == ["cheaper"]
    dearer = view.model_copy(update={"considered": [ConsideredRow(provider="aws", flavor="c", gpu_count=1,
                                                                  gpu_name="L4", instances=1, price_per_hour=1.0,
                                                                  currency="USD", verdict="costs more")]})
    found = problems(dearer, _reply([_rec("pick", "a", "h100-sxm", 10)], [{"flavor": "c", "job_cost": None}]),
                     kb.gpus)
    assert [p["check"] for p in found] == ["cheaper"]


def test_a_total_is_its_hours_times_its_price():
    kb = _core().kb
    view = AnswerView(headline="", sections=[ViewSection(key="pick", lines=["x"])])
    r = _rec("pick", "a", "h100-sxm", 10, 2)
    assert not problems(view, _reply([r]), kb.gpus)
    assert [p["check"] for p in problems(view, _reply([{**r, "job_cost": 35.0}]), kb.gpus)] == ["totals"]


def test_no_nvidia_words_on_an_all_ascend_answer_and_below_needs_something_below():
    kb = _core().kb
    ascend = next(g for g, x in kb.gpus.items() if x.vendor == "huawei")
    view = AnswerView(headline="", sections=[ViewSection(key="why", lines=["needs 40 GiB"],
                                                         more=["CUDA context 1.0", "weights 30"])])
    found = problems(view, _reply([_rec("pick", "m", ascend, 10)]), kb.gpus)
    assert [p["check"] for p in found] == ["ascend"]
    assert drop(view, found).sections[0].more == ["weights 30"]
    assert not problems(view, _reply([_rec("pick", "m", "h100-sxm", 10)]), kb.gpus)
    lone = AnswerView(headline="", sections=[ViewSection(key="lead", lines=["the options below are from elsewhere"])])
    assert [p["check"] for p in problems(lone, _reply([]), kb.gpus)] == ["below"]


def test_a_spec_line_says_a_missing_figure_in_words():
    """'FP8 -, NVLink -' and '? GB/s' in a card's spec line (set1 C12, C17, C22; s2-22); an Ascend has no NVLink."""
    for q, lang in [("T4 和 A10 有什么区别？", "zh"), ("compare the A100 40GB and the L4", "en"),
                    ("910B 的规格是什么？", "zh")]:
        reply = _core().turn(q, {})[0]
        assert reply.lang == lang
        assert not text_problems(reply.text), (q, text_problems(reply.text))
        if "910" in q:
            assert "NVLink" not in reply.text, reply.text[:400]


QUESTIONS = {
    "en": ["LoRA fine-tune {m} on 20k samples of 1024 tokens on {g}", "serve {m} for 40 users on {g}",
           "we have 8 x {g}: full fine-tune {m} on 1B tokens, how long?", "what does {m} need on {g} to pre-train on 5B tokens"],
    "zh": ["在 {g} 上用 LoRA 微调 {m}，2万条样本，每条 1024 token", "用 {g} 部署 {m}，40 个并发用户",
           "我们有 8 张 {g}，全参微调 {m}，10亿 token，要多久？", "用 {g} 预训练 {m}，50亿 token，要多少卡"],
}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lang=st.sampled_from(["en", "zh"]), i=st.integers(0, 3),
       m=st.sampled_from(["qwen2.5-7b", "llama-3.1-8b", "qwen2.5-32b", "llama-3.1-70b"]),
       g=st.sampled_from(["H100", "A100", "L4", "910B", "Ascend 910B", "RTX 4090", "H800"]))
def test_no_generated_answer_contradicts_itself(lang, i, m, g):
    """Any job kind on NVIDIA or Ascend hardware, either language: the consistency check finds nothing (the
    conftest hook also asserts it), and an answer whose cards are all Ascend says no CUDA/NVLink words."""
    reply = _core().turn(QUESTIONS[lang][i].format(m=m, g=g), {})[0]
    assert reply.lang == lang
    if reply.view is not None:
        assert not problems(reply.view, reply.model_dump(), _core().kb.gpus)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.sampled_from(["qwen2.5-32b", "llama-3.1-70b", "qwen2.5-vl-7b", "llama-3.1-8b"]),
       g=st.sampled_from(["L4", "T4", "RTX 4090"]), load=st.sampled_from(["5 req/s", "40 concurrent users"]),
       lang=st.sampled_from(["en", "zh"]))
def test_a_card_that_does_not_hold_the_job_meets_no_target(m, g, load, lang):
    """s3-18: 'one L4 does not fit (39 GiB > 24 GiB)' over 'Targets: 5 requests/s - meets': a plan that cannot
    hold the job meets none of the targets stated, whatever its speed would be."""
    q = f"can a single {g} serve {m} at {load}?" if lang == "en" else \
        f"一张{g}能跑 {m} 推理吗？{load.replace('concurrent users', '个并发用户')}"
    reply = _core().turn(q, {})[0]
    first = reply.recommendations[0] if reply.recommendations else {}
    if first.get("label") == "yours" and first.get("fits") is False:
        assert all(x["met"] is False for x in reply.targets), (q, reply.targets)
