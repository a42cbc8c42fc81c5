"""Inverse sizing with the declared margin (rules/critic.yaml `headroom`).

'The biggest model $50k can train' and 'how many tokens in 7 days on 64 H100' are sized to the limit: the plan
spends 94-100 % of the budget or the time, which no engineer signs (a restart, an estimate 20 % off). The verdict
says the share used and that it is tight whenever it is over `tight_share`, and gives the size that takes at most
`deadline_share_target` of the limit beside it, in both languages (templates verdicts.yaml).

A property over generated budgets x cards x fleets x weeks x language, for both kinds (model, tokens).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.plan.critic import check_invariants
from bot.plan.inverse import SETTLED

RULES = Path(__file__).resolve().parent.parent / "rules"
LIMITS = check_invariants(RULES)[0]["headroom"].limits
TIGHT, SHARE = LIMITS["tight_share"], LIMITS["deadline_share_target"]
SAID_TIGHT = {"en": "That is tight", "zh": "余量不足"}

ASK = {
    "en": ["We have {b} USD to pretrain from scratch. What's the biggest model we can train on {g}s?",
           "With {n} {g} for {w} weeks, what's the biggest model we can train compute-optimal?",
           "how many tokens can I train llama 3.1 8b on in {d} days with {n} {g}"],
    "zh": ["预算 {b} 美元，用 {g} 从头预训练，最大能训多大的模型？",
           "我们有 {n} 张 {g}，{w} 周，能训多大的模型？",
           "我们有 {n} 张 {g}，{d} 天，llama 3.1 8b 最多能训多少 token？"],
}


@settings(max_examples=10, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lang=st.sampled_from(["en", "zh"]), form=st.integers(min_value=0, max_value=2),
       b=st.sampled_from([5000, 50000, 400000]), g=st.sampled_from(["H100", "A100", "H200"]),
       n=st.sampled_from([8, 16, 64]), w=st.sampled_from([1, 3, 6]), d=st.sampled_from([3, 7, 20]))
def test_a_size_at_the_edge_of_its_limit_is_said_tight_with_the_size_that_keeps_the_margin(core, lang, form, b, g,
                                                                                         n, w, d):
    text = ASK[lang][form].format(b=b, g=g, n=n, w=w, d=d)
    r = core.turn(text, {})[0].model_dump()
    v = r["verdict"]
    if not v or v.get("answer") != "estimate":
        return
    used = v["spend"] / v["budget"] if v["bound"] == "budget" else v["hours"] / (v["deadline_days"] * 24)
    assert abs(used - v["used"]) < 0.02, (used, v["used"])
    m = v.get("margin")
    if used <= TIGHT:
        assert m is None and SAID_TIGHT[lang] not in r["text"], (text, used)
        return
    assert SAID_TIGHT[lang] in r["text"] and f"{v['used']:.0%}" in r["text"], (text, r["text"][:600])
    if m is None:           # no smaller plan keeps the margin (the smallest size tried): said tight all the same
        return
    assert m["used"] <= SHARE / (1 - SETTLED) + 1e-3 and m["share"] == SHARE, (text, m)
    if v["kind"] == "biggest_model":
        assert m["params_b"] < v["params_b"] and abs(m["tokens"] - 20 * m["params_b"] * 1e9) < 1e6, (text, m)
    else:
        assert m["tokens"] < v["tokens"] and m["params_b"] == v["params_b"], (text, m)
    said = f"{m['params_b']:g}B" if v["kind"] == "biggest_model" else f"{m['tokens'] / 1e9:,.0f}B"
    assert said in r["text"], (text, said, r["text"][:600])


@pytest.mark.parametrize("text, lang", [
    ("what is the biggest model I can pretrain with $50k on H100s?", "en"),       # 10B at 94 % of the budget
    ("5 万美元预算，用 H100 从头预训练，最大能训多大的模型？", "zh"),
    ("how many tokens can I train llama 3.1 8b on in 7 days with 64 H100", "en"),  # 190B at 98 % of the week
    ("我们有 64 张 H100，7 天，llama 3.1 8b 最多能训多少 token？", "zh"),
])
def test_sized_to_the_edge_gives_the_size_with_margin(core, text, lang):
    r = core.turn(text, {})[0].model_dump()
    v = r["verdict"]
    assert v["used"] > TIGHT and v["margin"] and v["margin"]["used"] <= SHARE / (1 - SETTLED) + 1e-3, v
    assert SAID_TIGHT[lang] in r["text"].split("\n")[1], r["text"][:600]
