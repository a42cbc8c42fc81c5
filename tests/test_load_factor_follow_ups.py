"""A follow-up that scales the load by a factor, however it is hedged or worded, re-plans the job just answered at the
old load times the factor, says what changed first and how many cards more (or fewer) than the plan before, and is
never the help text (set5: '下个季度流量预计翻 3 倍，要加多少？' after a 72B service by daily users got the help text,
'and if traffic triples next quarter?' after 'how many L4s vs how many H100s?' got 'what is the job?').

Property over generated first turns (a service by request rate, by users at once, by daily users, in either
language) x generated follow-ups in either language, with the factor words people use (翻倍 / 翻 N 倍 / 涨到 N 倍 /
增加 N% / 是现在的 N 倍 / double / triple / N x / N-fold / up N% / N% more), hedged ('预计', 'is expected to',
'next quarter', 'will likely') or bare ('and if it triples?', '翻倍呢')."""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.conversation.relative import load_scale

FIRST = {
    "qps": {"en": "serve {model} for a chatbot at {n} requests/s, 800 input and 300 output tokens",
            "zh": "部署{model}做客服，QPS {n}，输入800输出300 token"},
    "users": {"en": "serve {model} for {n}0 concurrent users in production",
              "zh": "线上部署{model}，{n}0个用户同时在线"},
    "daily": {"en": "chat service on {model}, {n}0k daily active users, about 10 requests each a day, 1000 in 300 out",
              "zh": "用{model}做对话服务，日活 {n} 万，每人每天大概 10 轮，平均输入 1000 token 输出 300 token"},
}
LOAD_SLOT = {"qps": "qps", "users": "concurrency", "daily": "daily_users"}
MODELS = ["Qwen2.5-7B", "Llama-3.1-8B", "Qwen2.5-14B", "Qwen2.5-32B"]

# (phrasing, factor it says): {k} an integer factor as a digit, {kw} the same in words, {p} a percentage
INT_FACTOR = {
    "en": ["and if traffic {kw}s next quarter?", "traffic is expected to {k}x next quarter, how many more cards?",
           "we expect {k}x the traffic", "what if usage goes up {k}x?", "a {k}-fold increase in users, then?",
           "users will likely grow {k}-fold", "what if load is {k} times what it is now?", "traffic x{k}?"],
    "zh": ["下个季度流量预计翻 {k} 倍，要加多少？", "用户量涨到 {k} 倍呢", "如果请求量变成现在的 {k} 倍怎么办",
           "访问量预计会涨到原来的{k}倍", "下个月流量翻{kz}倍呢", "并发预计是现在的 {k} 倍，要加几张卡"],
}
PERCENT = {"en": ["what if load goes up {p}%", "traffic up {p}% next quarter?", "{p}% more users next month",
                  "usage will probably grow {p}%"],
           "zh": ["请求量增加 {p}%", "流量预计上涨{p}%，要加多少卡", "用户数增长 {p}% 呢"]}
DOUBLE = {"en": ["what if traffic doubles?", "and if it doubles?", "users double next year, then what?"],
          "zh": ["流量翻倍呢", "翻倍呢", "下季度用户量预计翻一番"]}
WORDS = {2: "double", 3: "triple", 4: "quadruple"}
ZH_WORDS = {2: "两", 3: "三", 4: "四", 5: "五"}
HELP = ("I only advise on", "我只回答", "Ask in your own words", "直接用自己的话问", "What is the job", "是什么任务")
MARK = {"en": "Re-planned the same job", "zh": "重新规划同一任务"}
FLEET = {"en": "Fleet:", "zh": "机群："}

_CORE: list = []


def _the_core():
    if not _CORE:
        from bot.conversation.turn import Core
        _CORE.append(Core.load())
    return _CORE[0]


def _phrasing(draw_kind: str, lang: str, pick: int, k: int, p: int) -> tuple[str, float]:
    if draw_kind == "int":
        texts = INT_FACTOR[lang]
        text = texts[pick % len(texts)]
        if "{kw}" in text and k not in WORDS:
            k = 3
        return text.format(k=k, kw=WORDS.get(k, ""), kz=ZH_WORDS.get(k, k)), float(k)
    if draw_kind == "pct":
        texts = PERCENT[lang]
        return texts[pick % len(texts)].format(p=p), 1 + p / 100
    texts = DOUBLE[lang]
    return texts[pick % len(texts)], 2.0


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lang=st.sampled_from(["en", "zh"]), how=st.sampled_from(["int", "pct", "double"]), pick=st.integers(0, 7),
       k=st.integers(2, 5), p=st.sampled_from([20, 30, 50, 80, 100, 150, 200]))
def test_a_factor_is_read_from_every_phrasing(lang, how, pick, k, p):
    text, factor = _phrasing(how, lang, pick, k, p)
    assert load_scale(text) == pytest.approx(factor), (text, load_scale(text), factor)


@pytest.mark.parametrize("text", [
    "we double the batch size", "triple check the numbers", "serve llama 3 for 3 users", "what if we use 2x A100?",
    "is H100 3x faster?", "H100 快 3 倍吗", "what if output doubles", "用 2 张 A100 呢", "2 x 4090 then?",
    "context 32k instead?", "budget doubles"])
def test_no_load_factor_where_none_is_said(text):
    assert load_scale(text) is None, text


@settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(FIRST)), lang1=st.sampled_from(["en", "zh"]), lang2=st.sampled_from(["en", "zh"]),
       how=st.sampled_from(["int", "pct", "double"]), pick=st.integers(0, 7), k=st.integers(2, 5),
       p=st.sampled_from([50, 100, 200]), model=st.sampled_from(MODELS), n=st.sampled_from([2, 5, 8]))
def test_a_scaled_load_is_re_planned_with_the_fleet_delta(kind, lang1, lang2, how, pick, k, p, model, n):
    follow, factor = _phrasing(how, lang2, pick, k, p)
    core = _the_core()
    r1, state = core.turn(FIRST[kind][lang1].format(model=model, n=n), {})
    assert r1.status == "answer", r1.text[:200]
    r2, _ = core.turn(follow, state)
    assert not any(h in r2.text for h in HELP), (follow, r2.text[:300])
    assert r2.status == "answer" and r2.intent == r1.intent, (follow, r2.status, r2.text[:300])
    slot = LOAD_SLOT[kind]
    old, new = float(r1.slots[slot]), float(r2.slots[slot])
    want = math.ceil(old * factor) if slot in ("concurrency", "daily_users") else old * factor
    assert new == pytest.approx(want, rel=1e-4), (follow, slot, old, new, factor)
    lines = r2.text.splitlines()
    assert MARK[lang2] in lines[0] and slot in {c["slot"] for c in r2.changed} | {"qps"}, (lines[0], r2.changed)
    # how many cards more than before: the second line, from the same figures as the two plans
    delta = next((x["because"] for x in r2.rule_trace if x.get("rule") == "fleet_delta"), None)
    assert delta and FLEET[lang2] in lines[1], lines[:2]
    rec = next(x for x in r2.recommendations if x.get("label") != "yours")
    assert delta["cards_after"] - delta["cards_before"] == delta["cards_delta"]
    from bot.conversation.fleet_delta import plan_cards
    assert delta["cards_after"] == plan_cards(rec)
    first = next(x for x in r1.recommendations if x.get("label") != "yours")
    assert delta["cards_before"] == plan_cards(first)


@pytest.mark.parametrize("follow, factor", [("and if traffic triples next quarter?", 3.0), ("what if load goes up 50%", 1.5),
                                            ("流量预计翻 3 倍呢", 3.0)])
def test_a_scaled_load_after_a_card_comparison_compares_again(core, follow, factor):
    """'how many L4s vs how many H100s?' keeps no job; the factor scales the load it compared at, and the comparison
    is made again at that load, each side's card count said before and after."""
    first = ("We serve Llama-3.1-8B-Instruct, expect 50 req/s at peak, ~1000 input / 250 output tokens each. GCP. "
             "How many L4s vs how many H100s?")
    r1, state = core.turn(first, {})
    r2, _ = core.turn(follow, state)
    assert not any(h in r2.text for h in HELP), r2.text[:300]
    assert (r2.verdict or {}).get("kind") == "compare", r2.text[:300]
    assert r2.slots.get("qps") == pytest.approx(50 * factor), r2.slots
    before = {s["name"]: s["gpus"] for s in r1.verdict["sides"]}
    after = {s["name"]: s["gpus"] for s in r2.verdict["sides"]}
    assert all(after[k] >= before[k] for k in before), (before, after)
    assert "50" in r2.text.splitlines()[0] and "->" in r2.text.splitlines()[0] or "→" in r2.text.splitlines()[0], \
        r2.text.splitlines()[0]
