"""Plans with headroom (rules/critic.yaml `headroom`; set7 class: plans with no headroom).

No engineer signs a fleet sized so the job ends at 95-99 % of the deadline, a serving fleet that runs at 95-99 % of
what it carries at the latency target, or a budget spent to 97 % called "fits": estimates are 20-30 % off, jobs
restart, loads spike. The planner sizes with a declared margin (replicas carry the peak at `utilisation_target` of
their capacity; a timed run takes at most `deadline_share_target` of the deadline), shows it in the Load line, and
a met target the plan still uses more than `tight_share` of (the largest cluster searched, the user's own cards) is
said as tight beside "meets".

Properties over generated serving jobs (every load unit a margin applies to, both languages) and deadline jobs
(pre-training, batch inference, the user's own cards), and table rows from our own arithmetic.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.plan.batch import STARTUP_H, replicas_for
from bot.plan.capacity import Capacity
from bot.plan.critic import check_invariants, stated_targets

RULES = Path(__file__).resolve().parent.parent / "rules"
LIMITS = check_invariants(RULES)[0]["headroom"].limits
TIGHT = LIMITS["tight_share"]
UTIL = LIMITS["utilisation_target"]
SHARE = LIMITS["deadline_share_target"]
SAID_TIGHT = {"en": "but tight", "zh": "余量不足"}
SIZED_FOR = {"en": f"sized for {UTIL:.0%} utilisation at peak", "zh": f"按高峰 {UTIL:.0%} 利用率规划"}
LOAD_TARGETS = ("users", "streams", "rate", "rate_peak")
LATENCY_TARGETS = ("ttft", "tpot", "e2e", "latency")
PROVIDERS = {"en": ["", "on AWS", "on GCP", "on Huawei Cloud"], "zh": ["", "在 AWS 上", "在谷歌云上", "在华为云上"]}


def test_the_limits_are_declared_with_sources():
    """The margin is data with its justification and sources, not a factor in the code."""
    inv = check_invariants(RULES)[0]["headroom"]
    assert 0.6 <= UTIL <= 0.85 and 0.7 <= SHARE <= 0.9 and max(UTIL, SHARE) < TIGHT < 1
    assert inv.cite and "Llama 3" in inv.justify


def _ask(core, question: str) -> dict:
    return core.turn(question, {})[0].model_dump()


def _join(lang: str, *parts: str) -> str:
    return ("，" if lang == "zh" else ", ").join(p for p in parts if p)


# ----- generated serving jobs --------------------------------------------------------------------------------------
@st.composite
def serving_jobs(draw) -> tuple[str, str]:
    lang = draw(st.sampled_from(["en", "zh"]))
    kind = draw(st.sampled_from(["users", "rate", "daily", "embed", "image", "vlm", "production"]))
    llm = draw(st.sampled_from(["qwen2.5-7b", "llama-3.1-8b", "qwen2.5-14b", "qwen2.5-32b"]))
    n = draw(st.sampled_from([7, 20, 37, 50, 120, 300]))
    en, zh = {
        "users": (f"serve {llm} for {n} concurrent users", f"部署 {llm}，{n} 个并发用户"),
        "rate": (f"serve {llm} at {n} requests per second", f"部署 {llm}，每秒 {n} 个请求"),
        "daily": (f"serve {llm}, {n * 1000} requests a day", f"部署 {llm}，每天 {n * 1000} 次请求"),
        "embed": (f"serve bge-large at {n * 10} requests per second", f"部署 bge-large，每秒 {n * 10} 个请求"),
        "image": (f"serve SDXL, {n} images per minute", f"部署 SDXL，每分钟 {n} 张图"),
        "vlm": (f"serve qwen2.5-vl-7b for {n} concurrent users", f"部署 qwen2.5-vl-7b，{n} 个并发用户"),
        "production": (f"production chatbot on {llm}, peak {n} concurrent users",
                       f"线上客服用 {llm}，高峰 {n} 个并发用户"),
    }[kind]
    return _join(lang, en if lang == "en" else zh, draw(st.sampled_from(PROVIDERS[lang]))), lang


def _unsaid_tight(r: dict) -> list[str]:
    """Every met target the plan uses more than `tight_share` of is said as tight, in the answer's own words."""
    out = []
    for x in r["targets"]:
        if x.get("met") is not True or not x.get("plan") or not x.get("asked"):
            continue
        if x["target"] in ("deadline", "budget") + LATENCY_TARGETS:
            share = x["plan"] / x["asked"]
        elif x["target"] in LOAD_TARGETS:
            share = x.get("used") or (x.get("sized_for") or x["asked"]) / x["plan"]
        else:
            continue
        if share > TIGHT and not (x.get("tight") and SAID_TIGHT[r["lang"]] in r["text"]):
            out.append(f"{x['target']}: {share:.0%} used, not said as tight")
    return out


def _serving_problems(r: dict) -> list[str]:
    if r["status"] != "answer":
        return []
    out = _unsaid_tight(r)
    pick = next((x for x in r["recommendations"] if x.get("label") != "yours"), None)
    cap = (pick or {}).get("capacity")
    if not cap or not cap.get("per_replica") or not cap["enough"]:
        return out
    # the sizing used the declared target: replicas are the peak over that share of a replica (the production
    # minimum may add more), and the division says so where the capacity is not derated already (live speech)
    if cap["derated"] == 1:
        if cap["utilisation"] != UTIL:
            out.append(f"sized at {cap['utilisation']}, not the declared {UTIL}")
        need = max(1, math.ceil(cap["load"] / (cap["per_replica"] * UTIL) - 1e-6))
        if cap["need"] != need or cap["replicas"] < need:
            out.append(f"{cap['load']} / ({UTIL} x {cap['per_replica']}) = {need}, plan needs {cap['need']} runs "
                       f"{cap['replicas']}")
        if SIZED_FOR[r["lang"]] not in r["text"]:
            out.append("the Load line does not say the utilisation it was sized for")
    if cap["used"] > TIGHT and not any(x.get("tight") for x in r["targets"]):
        out.append(f"fleet at {cap['used']:.0%} of what it carries, not said as tight")
    return out


@settings(max_examples=45, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(job=serving_jobs())
def test_a_served_load_runs_under_the_utilisation_limit_or_is_said_tight(core, job):
    question, lang = job
    r = _ask(core, question)
    assert r["lang"] == lang
    problems = _serving_problems(r)
    assert not problems, (question, problems, r["text"][:900])


# ----- generated latency targets ----------------------------------------------------------------------------------
@st.composite
def latency_jobs(draw) -> tuple[str, str]:
    """A served model with a stated time to the first token, per output token, per whole answer or per request
    (an encoder), at budgets from loose to right at what the plan does."""
    lang = draw(st.sampled_from(["en", "zh"]))
    kind = draw(st.sampled_from(["ttft", "tpot", "e2e", "encoder"]))
    llm = draw(st.sampled_from(["qwen2.5-7b", "llama-3.1-8b", "qwen2.5-14b"]))
    q = draw(st.sampled_from([2, 5, 20]))
    ms = {"ttft": [100, 200, 500], "tpot": [15, 30, 50], "e2e": [2, 3, 5], "encoder": [20, 50]}[kind]
    v = draw(st.sampled_from(ms))
    en, zh = {
        "ttft": (f"serve {llm} at {q} requests per second, TTFT under {v} ms",
                 f"部署 {llm}，每秒 {q} 个请求，首 token {v} 毫秒内"),
        "tpot": (f"serve {llm} at {q} requests per second, {v} ms per output token",
                 f"部署 {llm}，每秒 {q} 个请求，每个 token {v} 毫秒以内"),
        "e2e": (f"serve {llm} at {q} requests per second, each answer within {v} s",
                f"部署 {llm}，每秒 {q} 个请求，{v} 秒内返回"),
        "encoder": (f"serve bge-large at {q * 20} requests per second, latency under {v} ms",
                    f"部署 bge-large，每秒 {q * 20} 个请求，延迟 {v} 毫秒以内"),
    }[kind]
    return _join(lang, en if lang == "en" else zh, draw(st.sampled_from(PROVIDERS[lang]))), lang


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(job=latency_jobs())
def test_a_latency_target_met_within_the_tight_share_is_said_tight(core, job):
    """A time to the first token, per token or per request the plan takes over `tight_share` of is said as tight
    beside 'meets' (29.8 ms against 30 ms a token is met on paper and missed at the first spike), in the answer's
    language, and critic.headroom fires."""
    question, lang = job
    r = _ask(core, question)
    if r["status"] != "answer":
        return
    problems = _unsaid_tight(r)
    if any(x.get("tight") and x["target"] in LATENCY_TARGETS for x in r["targets"]) and \
            not any(e["rule"] == "critic.headroom" and e["fired"] for e in r["rule_trace"]):
        problems.append("a tight latency with critic.headroom held")
    assert not problems, (question, problems, r["text"][:900])


# ----- generated deadline jobs -------------------------------------------------------------------------------------
@st.composite
def deadline_jobs(draw) -> tuple[str, str]:
    lang = draw(st.sampled_from(["en", "zh"]))
    kind = draw(st.sampled_from(["pretrain", "pretrain_gpu", "own", "batch"]))
    size = draw(st.sampled_from(["1B", "3B", "7B"]))
    tokens = draw(st.sampled_from([20, 100, 300]))
    days = draw(st.sampled_from([2, 5, 9.5, 10, 14, 30]))
    gpu = draw(st.sampled_from(["H100", "A100", "H800"]))
    n = draw(st.sampled_from([8, 16]))
    items, hours = draw(st.sampled_from([200_000, 2_000_000])), draw(st.sampled_from([6, 12, 20, 48]))
    en, zh = {
        "pretrain": (f"pretrain a {size} model on {tokens}B tokens, deadline {days:g} days",
                     f"预训练 {size} 模型，{tokens}B tokens，{days:g} 天内完成"),
        "pretrain_gpu": (f"pretrain a {size} model on {tokens}B tokens on {gpu}, we have {days:g} days",
                         f"用 {gpu} 预训练 {size} 模型，{tokens}B tokens，工期 {days:g} 天"),
        "own": (f"we have {n} {gpu}, pretrain a {size} model on {tokens}B tokens, deadline {days:g} days",
                f"我们有 {n} 张 {gpu}，预训练 {size} 模型 {tokens}B tokens，工期 {days:g} 天"),
        "batch": (f"summarise {items:,} news articles with llama 3.1 8b within {hours} hours",
                  f"用 llama 3.1 8b 离线总结 {items} 篇新闻，{hours} 小时内跑完"),
    }[kind]
    provider = draw(st.sampled_from(PROVIDERS[lang])) if kind != "own" else ""
    return _join(lang, en if lang == "en" else zh, provider), lang


@settings(max_examples=45, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(job=deadline_jobs())
def test_a_deadline_job_ends_within_the_declared_share_or_is_said_tight(core, job):
    """The pick's run takes at most `tight_share` of the deadline, or the answer says it is tight; a rented plan
    the planner sized itself takes at most `deadline_share_target` of it unless no count of that flavor does."""
    question, lang = job
    r = _ask(core, question)
    if r["status"] != "answer":
        return
    problems = _unsaid_tight(r)
    deadline = next((x for x in r["targets"] if x["target"] == "deadline"), None)
    pick = r["recommendations"][0] if r["recommendations"] else None
    if deadline and deadline["met"] and pick and pick.get("job_hours") and pick.get("label") != "yours":
        share = pick["job_hours"] / (deadline["asked"] * 24)
        if share > TIGHT and not deadline.get("tight"):
            problems.append(f"{pick['flavor']}: {share:.0%} of the deadline, not said as tight")
    assert not problems, (question, problems, r["text"][:900])


# ----- table rows: our own arithmetic ------------------------------------------------------------------------------
@pytest.mark.parametrize("load, per, util, need", [
    (37, 19, 0.8, 3),        # 37 in flight / (0.8 x 19) = 2.43 -> 3; at 100 % it was 2 (97 % busy)
    (20, 4.1, 0.8, 7),       # 20 requests/s / (0.8 x 4.1) = 6.1 -> 7; at 100 % 5 (98 %)
    (16, 20, 0.8, 1),        # 16 / 16 exactly: one replica, at 80 %
    (300, 75, 1.0, 4),       # live speech: 75 streams a GPU are already 80 % of the batched rate
])
def test_replicas_are_the_load_over_the_utilisation_target(load, per, util, need):
    cap = Capacity("sequences", load, per, need, 1, util)
    assert cap.need == need and cap.used <= util + 1e-9


def test_live_speech_is_not_derated_twice():
    cap = Capacity("streams", 300, 75, 4, 1, 1.0, 0.8)
    assert cap.need == 4 and cap.used == pytest.approx(0.8)


@pytest.mark.parametrize("items, rate, deadline, share, out", [
    (2_000_000, 16.8, 12, 0.85, (4, True)),     # 3 replicas end at 11.2 h (93 %): 4 end at 8.4 h
    (2_000_000, 16.8, 12, 1.0, (3, True)),      # at the edge, as it was
    (2_000_000, 16.8, None, 0.85, (1, True)),   # no deadline: the horizon, no margin
])
def test_batch_replicas_finish_within_the_share_of_the_deadline(items, rate, deadline, share, out):
    assert replicas_for(items, rate, deadline, 1, share) == out
    replicas = out[0]
    if deadline:
        assert STARTUP_H + items / (rate * replicas) / 3600 <= deadline * share


@pytest.mark.parametrize("slots, rec, tight", [
    ({"deadline_days": 10}, {"job_hours": 9.6 * 24}, 0.96),      # 9.6 of 10 days: met, tight
    ({"deadline_days": 10}, {"job_hours": 8.4 * 24}, None),      # 84 %: the margin holds
    ({"deadline_days": 10}, {"job_hours": 10.4 * 24}, None),     # missed: said as missed, not as tight
    ({"budget_amount": 1000, "budget_currency": "USD"}, {"budget": {"spend": 975}}, 0.975),
])
def test_a_met_target_over_the_tight_share_carries_it(slots, rec, tight):
    x = stated_targets(slots, rec, serving=False, encoder=False, tight=TIGHT)[0]
    assert x.get("tight") == tight


@pytest.mark.parametrize("slots, rec, encoder, tight", [
    ({"tpot_ms": 30}, {"tpot_ms": 29.8}, False, 0.993),                 # 99 % of the per-token budget: tight
    ({"tpot_ms": 30}, {"tpot_ms": 25}, False, None),                    # 83 %: the margin holds
    ({"tpot_ms": 30}, {"tpot_ms": 31}, False, None),                    # missed: said as missed, not as tight
    ({"ttft_ms": 500}, {"ttft_ms": 480}, False, 0.96),
    ({"latency_ms": 200}, {"ttft_ms": 190}, False, 0.95),               # a bare latency of a stream: its first token
    ({"e2e_ms": 3000}, {"ttft_ms": 100, "tpot_ms": 11}, False, 0.972),  # 100 + 256 x 11 = 2,916 of 3,000 ms
    ({"latency_ms": 50}, {"request_ms": 46}, True, 0.92),               # an encoder's request
    ({"latency_ms": 50}, {"request_ms": 40}, True, None),
])
def test_a_latency_met_over_the_tight_share_carries_it(slots, rec, encoder, tight):
    x = stated_targets(slots, rec, serving=True, encoder=encoder, output_len=256, tight=TIGHT)[0]
    assert x["met"] is (rec.get("tpot_ms", 0) <= slots.get("tpot_ms", 1e9)) and x.get("tight") == tight


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_tight_latency_is_said_from_the_templates(lang):
    from bot.render.reply import _target_text
    from bot.render.templates import default_templates
    t = default_templates()
    x = {"target": "tpot", "asked": 30, "plan": 29.8, "unit": "ms", "met": True, "by": -0.2, "tight": 0.993}
    text = _target_text(x, t, lang)
    assert SAID_TIGHT[lang] in text and "99%" in text, text


@pytest.mark.parametrize("q, lang", [
    ("pretrain a 1B model on 100B tokens with our 8 H100 PCIe, deadline 9.5 days", "en"),
    ("我们有 8 张 H100 PCIe，预训练 1B 模型 100B tokens，工期 9.5 天", "zh"),
])
def test_own_cards_at_97_percent_of_the_deadline_are_said_tight(core, q, lang):
    r = _ask(core, q)
    x = next(x for x in r["targets"] if x["target"] == "deadline")
    assert x["met"] and x["tight"] > TIGHT and SAID_TIGHT[lang] in r["text"], r["text"]
    assert any(e["rule"] == "critic.headroom" and e["fired"] for e in r["rule_trace"])


@pytest.mark.parametrize("orders, hours, due", [(200, 1.0, 1.0), (5000, 0.3, 2.0), (20000, 0.05, 0.5), (50, 2, 6)])
def test_a_queue_of_orders_is_sized_under_the_utilisation_target(orders, hours, due):
    """Erlang C takes the order time as exact: the resident replicas are also at most `utilisation_target` busy in
    the peak hour (at 20,000 orders of 3 minutes due in 30, Erlang C alone ran 126 replicas 99 % busy: 157 now)."""
    from bot.plan.queue import size_queue
    q = size_queue(orders, hours, due, 1, None, UTIL)
    assert q["utilisation"] <= UTIL + 1e-9 and q["late_share"] <= 0.05
