"""Questions that ask for a verdict get one, first (issue 32): tests/scenarios/verdicts.yaml, one test per question or
conversation, expectations written from arithmetic before the code ran; and properties over generated questions:
every comparison names a preferred side (or says it is a tie, and why) and gives both sides' numbers; every "enough?"
and "how long?" answer has its verdict in its first two lines."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

SCENARIOS = yaml.safe_load((Path(__file__).parent / "scenarios" / "verdicts.yaml").read_text(encoding="utf-8"))[
    "scenarios"]


def _case(s):
    marks = [pytest.mark.xfail(reason=s["known_gap"], strict=True)] if s.get("known_gap") else []
    return pytest.param(s, id=s["id"], marks=marks)


def _in(value, band, what):
    lo, hi = band
    assert value is not None and lo <= value <= hi, f"{what} {value} outside [{lo}, {hi}]"


def _run(core, s) -> dict:
    state: dict = {}
    for text in s.get("turns") or [s["q"]]:
        reply, state = core.turn(text, state)
    return reply.model_dump()


def _first_two(r: dict) -> str:
    return "\n".join(r["text"].split("\n")[:2])


def _gpu_family(kb, gpu_id: str, want: str) -> bool:
    """'h100' accepts any H100 (SXM, PCIe, NVL); an exact id otherwise."""
    return gpu_id == want or gpu_id.startswith((want + "-", want))


@pytest.mark.parametrize("s", [_case(s) for s in SCENARIOS])
def test_verdict_scenario(core, s):
    r = _run(core, s)
    e = s["expect"]
    assert r["status"] == e["status"], r["text"][:400]
    v = r["verdict"]
    assert v is not None and v["kind"] == e["kind"], (v, r["text"][:400])
    assert v["line"] and v["line"] in _first_two(r), (v["line"], r["text"][:400])
    if "first_has" in e:
        assert e["first_has"].lower() in _first_two(r).lower(), r["text"][:400]
    if "text_has" in e:
        assert e["text_has"] in r["text"], r["text"]
    for key in ("utilisation_pct", "need_discount_pct", "spend", "hours", "cards_needed", "params_b"):
        if key in e:
            _in(v.get(key), e[key], key)
    if "tokens_b" in e:
        _in((v.get("tokens") or 0) / 1e9, e["tokens_b"], "tokens (billions)")
    for key in ("basis", "answer", "typical", "training", "bound"):
        if key in e:
            got = v.get(key) if key in v else None
            if key in ("typical", "training"):
                got = v.get(key)
            assert got == e[key], (key, got, v)
    if e["kind"] == "billing" and "preferred" in e:
        assert v["preferred"] == e["preferred"], v
    if e["kind"] == "compare" and "preferred" in e:
        side = next(x for x in v["sides"] if x["name"] == v["preferred"])
        assert _gpu_family(core.kb, side["gpu"], e["preferred"]), (side["gpu"], v["line"])
    if "gpu" in e:
        assert v["groups"][0]["gpu"] == e["gpu"] or v.get("gpu") == e["gpu"], v
    if e.get("licensing"):
        assert any(c["kind"] == "licensing" for c in v["caveats"]), v["caveats"]
    if e.get("discounts_published"):
        assert v["discounts"], v
    if "checkpoint_min" in e:
        _in((v.get("spot") or v).get("interval_min"), e["checkpoint_min"], "checkpoint interval (min)")
    if "reserve" in e:
        assert bool(v.get("reserve")) == e["reserve"], v


def test_the_set_is_large_and_bilingual():
    """At least 60 conversations over every kind, both languages, each with its arithmetic."""
    zh = sum(any("\u4e00" <= c <= "\u9fff" for c in " ".join(s.get("turns") or [s.get("q", "")])) for s in SCENARIOS)
    kinds = {s["expect"]["kind"] for s in SCENARIOS}
    assert len(SCENARIOS) >= 60 and zh >= 15 and len(SCENARIOS) - zh >= 15
    assert kinds >= {"compare", "explain", "billing", "enough", "how_long", "bad_input", "biggest_model"}
    assert all(s.get("why") for s in SCENARIOS) and len({s["id"] for s in SCENARIOS}) == len(SCENARIOS)


# ----- properties over generated questions --------------------------------------------------------------------------
GPUS = ["T4", "L4", "A10", "A100", "H100", "L40S", "4090", "V100", "H200", "A10G"]
JOBS = {"en": ["for serving llama 3.1 8b to 20 users", "for lora fine-tuning qwen2.5 7b", "for inference",
               "for pretraining a 1B model on 20B tokens", "for serving qwen2.5 14b", ""],
        "zh": ["部署 llama 3.1 8b，20 个并发", "LoRA 微调 qwen2.5-7b", "推理", "预训练 1B 模型 200 亿 token", ""]}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pair=st.lists(st.sampled_from(GPUS), min_size=2, max_size=2, unique=True), lang=st.sampled_from(["en", "zh"]),
       job=st.integers(min_value=0, max_value=5))
def test_every_comparison_names_a_side_or_a_tie_and_both_numbers(core, pair, lang, job):
    jobs = JOBS[lang]
    text = f"{pair[0]} or {pair[1]} {jobs[job % len(jobs)]}?" if lang == "en" else \
        f"{jobs[job % len(jobs)]}，{pair[0]} 还是 {pair[1]}？"
    r = core.turn(text, {})[0].model_dump()
    assert r["status"] == "info" and r["intent"] == "compare", (text, r["text"][:300])
    v = r["verdict"]
    assert v and v["kind"] == "compare", (text, r["text"][:300])
    first = _first_two(r)
    assert v["line"] in first
    if v["tie"]:
        assert "tie" in v["line"].lower() or "打平" in v["line"], v["line"]
    elif v["basis"] != "none":
        assert v["preferred"], v
        name = next(s["gpu_name"] for s in v["sides"] if s["name"] == v["preferred"])
        assert name in v["line"], (name, v["line"])
    # both sides' numbers: each side's plan line (price, time or cards) is in the answer
    for s in v["sides"]:
        assert s["gpu_name"] in r["text"]
        if s["hourly"] is not None:
            assert s["monthly"] is not None
    if v["basis"] in ("job", "month", "mtok"):
        key = v["cost_key"]
        assert all(s[key] is not None for s in v["sides"] if s["fits"] and s["hourly"] is not None)
    fig = v.get("figures")
    if fig and v["factor"] in ("bandwidth", "compute") and fig["fa"] and fig["fb"]:
        # the figure named as the deciding factor favours the side preferred, or it decided nothing
        assert fig["fa"] > fig["fb"], (v["line"], v["factor"], fig)


ENOUGH = ["Budget {b} USD, pre-train a {p}B model on {t}B tokens. Is it enough?",
          "预算 {b} 美元，预训练 {p}B 模型，{t}0 亿 token，够吗？",
          "how long to pretrain a {p}B model on {t}B tokens?",
          "预训练 {p}B 模型 {t}0 亿 token 要多久？",
          "I have {g} H100. How long to pretrain a {p}B model on {t}B tokens?"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(form=st.integers(min_value=0, max_value=len(ENOUGH) - 1), b=st.sampled_from([100, 2000, 50000]),
       p=st.sampled_from([1, 3, 7]), t=st.sampled_from([1, 20, 100]), g=st.sampled_from([8, 16, 64]))
def test_enough_and_how_long_lead_with_the_verdict(core, form, b, p, t, g):
    text = ENOUGH[form].format(b=b, p=p, t=t, g=g)
    r = core.turn(text, {})[0].model_dump()
    assert r["status"] == "answer", (text, r["text"][:300])
    v = r["verdict"]
    assert v and v["kind"] in ("enough", "how_long"), (text, r["text"][:300])
    assert v["line"] in _first_two(r)
    if v["kind"] == "enough" and v["answer"] in ("yes", "no"):
        assert (v["answer"] == "yes") == (v["spend"] <= v["amount"])
        assert v["line"].startswith(("Yes", "No", "够", "不够"))


# ----- inverse sizing: the biggest model a budget or a fleet x time trains ------------------------------------------
INVERSE = {"en": ["We have {b} USD to pretrain from scratch. What's the biggest model we can train on {g}s?",
                  "With {n} {g} for {w} weeks, what's the biggest model we can train compute-optimal?"],
           "zh": ["预算 {b} 美元，用 {g} 从头预训练，最大能训多大的模型？",
                  "我们有 {n} 张 {g}，{w} 周，能训多大的模型？"]}


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lang=st.sampled_from(["en", "zh"]), form=st.integers(min_value=0, max_value=1),
       b=st.sampled_from([5000, 50000, 400000]), g=st.sampled_from(["H100", "A100", "H200"]),
       n=st.sampled_from([8, 16, 64]), w=st.sampled_from([1, 3, 6]))
def test_inverse_sizing_fits_its_limit_and_is_chinchilla(core, lang, form, b, g, n, w):
    """Every 'biggest model' answer leads with its verdict; the sized job is Chinchilla's D = 20 N; the plan it was
    sized on keeps within the limit that binds (the budget, or the weeks on the cards said) and uses at least 90 %
    of it (else a bigger model would have fit: cost grows as N^2, so 2 significant figures leave under 10 %)."""
    text = INVERSE[lang][form].format(b=b, g=g, n=n, w=w)
    r = core.turn(text, {})[0].model_dump()
    v = r["verdict"]
    assert v and v["kind"] == "biggest_model", (text, r["text"][:300])
    assert v["line"] in _first_two(r)
    if v["answer"] != "estimate":
        return
    assert abs(v["tokens"] - 20 * v["params_b"] * 1e9) < 1e6
    assert abs(v["flops"] - 6 * v["params_b"] * 1e9 * v["tokens"]) / v["flops"] < 1e-6
    if v["bound"] == "budget":
        assert v["spend"] <= v["budget"] * 1.03, v
        used = v["spend"] / v["budget"]
    else:
        assert v["hours"] <= v["deadline_days"] * 24 * 1.03, v
        used = v["hours"] / (v["deadline_days"] * 24)
    # a step to the next size up (2 significant figures) would cross the limit, unless the planner's pick jumped
    assert used >= 0.75 or v["params_b"] < 1, (used, v)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(other=st.sampled_from(["H100", "A100", "H200"]), lang=st.sampled_from(["en", "zh"]),
       job=st.sampled_from(["pre-training a 7B model on 1T tokens", "pretraining a 1B model on 20B tokens",
                            "full fine-tuning llama 3 8b on 1B tokens"]))
def test_an_unpriced_side_is_timed_with_its_break_even_price(core, other, lang, job):
    """A side with no public price (the Ascend 910B) is still timed for the same work, card for card against the
    priced side, and the verdict gives the card-hour price under which it would do the job for less."""
    text = f"{other} or Ascend 910B for {job}?" if lang == "en" else f"{job}，{other} 还是 910B？"
    r = core.turn(text, {})[0].model_dump()
    v = r["verdict"]
    assert v and v["kind"] == "compare", (text, r["text"][:300])
    if v["basis"] != "priced_timed":
        return
    by = {s["name"]: s for s in v["sides"]}
    a, b = by[v["preferred"]], by[v["other"]]
    assert a["hours"] and b["hours"] and a["job_cost"] and b["job_cost"] is None
    assert abs(v["break_even_card_hour"] * b["hours"] * b["gpus"] - a["job_cost"]) / a["job_cost"] < 0.02
    faster = a if a["hours"] * a["gpus"] <= b["hours"] * b["gpus"] else b
    assert v["faster"] == faster["name"]
    assert f"{a['hours'] / 24:,.1f}" in v["line"] and f"{b['hours'] / 24:,.1f}" in v["line"], v["line"]


# ----- spot for a training job ----------------------------------------------------------------------------------------
from bot.plan.verdicts import SPOT_WORTH, spot_verdict  # noqa: E402

_REC = {"price_per_hour": 20.0, "spot_price_per_hour": 4.0, "job_hours": 100.0, "instances": 1, "flavor": "x",
        "gpus_total": 8, "gpu_name": "G", "provider": "aws", "currency": "USD"}


@pytest.mark.parametrize("rec, share, span, deadline, answer", [
    (_REC, 0.05, None, None, "yes_if"),                                   # 80 % off, 5 % lost: 79 % saved
    (_REC, 0.05, None, 4.3, "no"),                                        # 105 h > 4.3 days = 103 h
    (_REC, 0.05, None, 4.5, "yes_if"),                                    # 105 h < 108 h
    ({**_REC, "spot_price_per_hour": 18.0}, 0.05, None, None, "no"),      # 10 % off, then 5 % lost: 5.5 % saved
    ({**_REC, "job_hours": None}, 0.05, 96.0, None, "yes_if"),            # untimed: the length said, 96 h
    ({**_REC, "job_hours": None}, 0.05, None, None, "yes_if"),            # no length: judged per hour
    ({**_REC, "spot_price_per_hour": None}, 0.05, None, None, "unknown"),
    ({**_REC, "price_per_hour": None}, 0.05, None, None, "unknown"),
    (None, 0.05, None, None, "unknown"),
])
def test_spot_verdict_table(rec, share, span, deadline, answer):
    v = spot_verdict(rec, share, 1.2, 112.0, span, deadline)
    assert v["answer"] == answer, v
    if answer == "yes_if" and v.get("hours"):
        assert v["spot_cost"] == pytest.approx(rec["spot_price_per_hour"] * v["hours"] * (1 + share), rel=0.01)
        assert v["interval_min"] == 72


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lang=st.sampled_from(["en", "zh"]), job=st.integers(min_value=0, max_value=3),
       where=st.sampled_from(["AWS p4d", "AWS", "Azure", "A100", "H100", ""]))
def test_spot_questions_get_a_spot_verdict_consistent_with_its_numbers(core, lang, job, where):
    """Every training question that asks about spot leads with a spot verdict; a 'yes' saves at least SPOT_WORTH after
    the time reclaims cost, keeps any deadline, and gives a checkpoint interval; a 'no' says which of those fails."""
    jobs = {"en": ["full fine-tune llama 3 8b on 1B tokens", "LoRA qwen2.5 7b on 200M tokens",
                   "pretrain a 1B model on 20B tokens", "our 3-day full fine-tune of qwen2.5 14b"],
            "zh": ["全参微调 llama 3 8b，10 亿 token", "LoRA 微调 qwen2.5-7b，2 亿 token", "预训练 1B 模型 200 亿 token",
                   "qwen2.5 14b 全参微调跑 3 天"]}
    text = f"{jobs[lang][job]} on {where} spot instances, good idea?" if lang == "en" else \
        f"{jobs[lang][job]}，用{where}竞价实例靠谱吗？"
    r = core.turn(text, {})[0].model_dump()
    v = r["verdict"]
    assert r["status"] == "answer" and v and v["kind"] == "spot", (text, r["text"][:300])
    assert v["line"] in _first_two(r)
    if v["answer"] == "yes_if":
        assert v["saving_pct"] >= 100 * SPOT_WORTH - 0.5 and v["interval_min"] >= 1
        assert not v.get("deadline_days") or v["hours_spot"] <= v["deadline_days"] * 24
        assert str(v["interval_min"]) in r["text"]
    elif v["answer"] == "no":
        assert v["why"] in ("deadline", "saving")


# ----- 'not enough': the priced ways to fit the budget ---------------------------------------------------------------
NOT_ENOUGH = {"en": "Budget {b} USD, full fine-tune {m} on {t}B tokens. Is it enough?",
              "zh": "预算 {b} 美元，全参微调 {m}，{t}0 亿 token，够吗？"}


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lang=st.sampled_from(["en", "zh"]), b=st.sampled_from([300, 1500, 6000]),
       m=st.sampled_from(["llama 3 70b", "qwen2.5 32b", "qwen2.5 72b", "llama 3.1 8b"]), t=st.sampled_from([2, 10, 30]))
def test_not_enough_comes_with_priced_ways_to_fit(core, lang, b, m, t):
    """Every 'No, not enough' for a training job with a token count is followed by priced ways to fit: at least the
    most tokens the budget trains (within it, by construction), each path's number in the answer's first lines, and
    every path marked 'within the budget' costs no more than the budget."""
    text = NOT_ENOUGH[lang].format(b=b, m=m, t=t)
    r = core.turn(text, {})[0].model_dump()
    v = r["verdict"]
    assert v and v["kind"] == "enough", (text, r["text"][:300])
    if v["answer"] != "no":
        return
    paths = v.get("paths") or []
    assert any(p["kind"] == "tokens" for p in paths) or v["spend"] > 0, (text, paths)
    head = "\n".join(r["text"].split("\n")[:2 + len(paths)])
    for p in paths:
        if p.get("fits"):
            assert p["spend"] is not None and p["spend"] <= v["amount"] * 1.03, p
        if p["kind"] == "tokens":
            assert p["tokens"] < p["was"] and f"{p['pct']}" in head, (p, head)


# ----- comparisons along other axes: precisions, methods, clouds, flavors (compare_on) ------------------------------
AXIS_PAIRS = {
    "precision": [("bf16", "fp8"), ("fp8", "int4"), ("fp8", "awq"), ("bf16", "int4"), ("int8", "fp8")],
    "method": [("lora", "full fine-tuning"), ("qlora", "lora"), ("full fine-tuning", "qlora")],
    "provider": [("aws", "lambda"), ("huawei cloud", "aws"), ("gcp", "azure"), ("lambda", "gcp")],
    "flavor": [("g6e.xlarge", "g6.xlarge"), ("p5.48xlarge", "a3-highgpu-8g"), ("p4d.24xlarge", "p5.48xlarge"),
               ("g6e.xlarge", "g5.xlarge")],
}
AXIS_JOBS = {"en": ["serving qwen2.5 14b to 20 users", "lora fine-tuning llama 3.1 8b on 20k samples",
                    "fine-tuning qwen2.5 7b", "serving llama 3.1 70b", ""],
             "zh": ["部署 qwen2.5 14b，20 个并发", "LoRA 微调 llama 3.1 8b，2 万条样本", "微调 qwen2.5 7b", "部署 llama 3.1 70b", ""]}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(axis=st.sampled_from(sorted(AXIS_PAIRS)), k=st.integers(min_value=0, max_value=9),
       lang=st.sampled_from(["en", "zh"]), job=st.integers(min_value=0, max_value=4),
       gpu=st.sampled_from(["", "H100", "L40S", "A100"]))
def test_every_axis_comparison_names_a_side_or_a_tie_with_both_sides_numbers(core, axis, k, lang, job, gpu):
    """Precisions, methods, clouds and flavors compared for a generated job, in both languages: the verdict is in the
    first two lines, names one of the two sides compared (or says tie), and each side has its plan line or says
    why it cannot do the job."""
    a, b = AXIS_PAIRS[axis][k % len(AXIS_PAIRS[axis])]
    where = "" if axis in ("flavor",) or not gpu else (f" on {gpu}" if lang == "en" else f"，在 {gpu} 上")
    text = f"{a} or {b} for {AXIS_JOBS['en'][job]}{where}?" if lang == "en" else \
        f"{AXIS_JOBS['zh'][job]}{where}，{a} 还是 {b}？"
    r = core.turn(text, {})[0].model_dump()
    v = r["verdict"]
    assert v and v["kind"] == "compare" and v.get("axis") == axis, (text, r["text"][:400])
    assert v["line"] in _first_two(r), (text, r["text"][:400])
    labels = [s["label"] for s in v["sides"]]
    assert len(labels) == 2 and labels[0] != labels[1], (text, labels)
    if v["tie"]:
        assert "tie" in v["line"].lower() or "打平" in v["line"], v["line"]
    elif v["basis"] != "none":
        pref = next(s["label"] for s in v["sides"] if s["name"] == v["preferred"])
        assert v["line"].startswith(pref) or v["line"].startswith("选 " + pref), (text, pref, v["line"])
    for s in v["sides"]:
        assert f"{s['label']}: " in r["text"] or f"{s['label']}：" in r["text"], (text, s["label"], r["text"][:600])
        if s["fits"] and s["hourly"] is not None:
            assert s["monthly"] is not None and (s["job_cost"] is not None or not v["training"] or not s["hours"])
        if not s["fits"]:
            assert s.get("why_not") or s.get("cards") is not None or v["basis"] in ("none", "priced", "fit"), s
    if v["axis"] in ("precision", "method"):
        assert any(c["kind"].startswith("quality_") for c in v["caveats"]), v["caveats"]
    if v["axis"] == "flavor":      # a flavor side is its own card, whatever else the question names
        for s in v["sides"]:
            cards = {f.gpu for f in core.kb.flavors.values() if f.flavor == s["label"] or f.family == s["label"]}
            assert not cards or s["gpu"] in cards, (s["label"], s["gpu"], cards)
            if s.get("why_not") and s["why_not"].get("gpu"):
                assert any(core.kb.gpus[g].name == s["why_not"]["gpu"] for g in cards), s["why_not"]


@pytest.mark.parametrize("text", ["fp8 vs fp8 for serving qwen2.5 14b", "lora or lora for llama 3.1 8b",
                                  "aws vs aws for serving llama 3.1 8b", "g6.xlarge or g6.xlarge for a 7b model",
                                  "p5.48xlarge vs p5.48xlarge for pretraining 1b on 10b tokens", "fp8 还是 fp8 部署 qwen2.5 14b",
                                  "lambda 和 lambda 哪个便宜"])
def test_an_axis_compared_with_itself_says_so(core, text):
    """A precision, method, cloud or flavor compared with itself: a clear reply naming it, never a comparison of
    one side, the help text or an answer that ignores the comparison."""
    r = core.turn(text, {})[0]
    assert r.status == "info" and (r.verdict or {}).get("kind") == "bad_input", r.text[:300]
    assert "itself" in r.text or "它自己" in r.text, r.text


# ----- billing for the conversation's own job; rentals compared; a side added; one flavor for a job --------------
SERVICES = {"en": ["serve {m} for 20 users", "serve {m}, {n} requests a day, 500 tokens in and 300 out"],
            "zh": ["部署 {m}，20 个并发", "部署 {m}，每天 {n} 次请求，输入 500 token，输出 300 token"]}
BILLING_ASK = {"en": ["monthly or pay-per-use?", "is a monthly package cheaper than pay as you go?"],
               "zh": ["包月和按量付费哪个划算？", "包月还是按需？"]}


@settings(max_examples=14, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lang=st.sampled_from(["en", "zh"]), form=st.integers(min_value=0, max_value=1),
       model=st.sampled_from(["llama 3.1 8b", "qwen2.5 14b", "qwen2.5 32b"]), n=st.sampled_from([20000, 200000]),
       ask=st.integers(min_value=0, max_value=1))
def test_billing_after_a_service_is_judged_at_730_hours_of_its_own_plan(core, lang, form, model, n, ask):
    """A billing question after a service was sized: judged at the 730 h a month a service runs, on the plan the job
    was answered with (its flavor and cloud), verdict first; a service sized for a peak keeps the average's replicas
    on a month's package and the rest pay-per-use."""
    r1, state = core.turn(SERVICES[lang][form].format(m=model, n=n), {})
    pick = next((x for x in r1.recommendations if x.get("label") != "yours" and x.get("price_per_hour")), None)
    r = core.turn(BILLING_ASK[lang][ask], state)[0].model_dump()
    v = r["verdict"]
    assert v and v["kind"] == "billing", r["text"][:300]
    assert v["line"] in _first_two(r)
    if pick is None:
        return
    assert v["utilisation_pct"] == 100 and v["hours_from"] in ("service", None), v
    assert v["preferred"] in ("monthly", "split"), v
    assert pick["flavor"] in (v["flavor"] or ""), (pick["flavor"], v["flavor"])
    if v["preferred"] == "split":
        sp = v["split"]
        assert 1 <= sp["base"] < sp["replicas"] and sp["base"] + sp["burst"] == sp["replicas"], sp
        assert sp["base"] == -(-sp["replicas"] // 3) or sp["peak_x"] != 3, sp


RENTALS = [("aws", "lambda"), ("aws", "gcp"), ("lambda", "azure"), ("p5", "a3-highgpu-8g"), ("p4d", "p5"),
           ("gcp", "huawei cloud")]


@settings(max_examples=14, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pair=st.sampled_from(RENTALS), gpus=st.sampled_from([1, 8, 16]), span=st.sampled_from([(3, "days", "天"),
       (2, "weeks", "周"), (1, "month", "个月")]), lang=st.sampled_from(["en", "zh"]),
       gpu=st.sampled_from(["H100", "A100"]))
def test_a_rental_compared_costs_its_hours_and_the_cheaper_side_wins(core, pair, gpus, span, lang, gpu):
    """'8x H100 for 2 weeks: AWS or Lambda?' with no job named: each side's cheapest size that holds the cards, for
    the hours said; each side's cost is its hourly price x those hours, and the verdict names the cheaper one."""
    n, unit_en, unit_zh = span
    text = f"{gpus}x {gpu} for {n} {unit_en}, {pair[0]} vs {pair[1]}, which is cheaper?" if lang == "en" else \
        f"{gpus} 张 {gpu} 用 {n} {unit_zh}，{pair[0]} 还是 {pair[1]} 便宜？"
    r = core.turn(text, {})[0].model_dump()
    v = r["verdict"]
    assert v and v["kind"] == "compare", (text, r["text"][:300])
    assert v["line"] in _first_two(r)
    hours = n * (24 if unit_en == "days" else 168 if unit_en == "weeks" else 30.4 * 24)
    priced = [s for s in v["sides"] if s["hourly"] is not None]
    for s in priced:
        assert abs(s["hours"] - hours) <= 1, (s["hours"], hours)
        assert abs(s["job_cost"] - s["hourly"] * s["hours"]) <= 0.01 * s["job_cost"] + 1, s
        assert s["gpus"] >= gpus, s
    sound = [s for s in priced if s["price_kind"] != "flagged"]      # a flagged catalog row decides nothing alone
    if len(sound) == 1 and len(priced) >= 2:
        _flagged_side_judged_at_list_prices(v, sound[0])
    elif len(priced) >= 2 and not v["tie"]:
        cheapest = min(sound if len(sound) >= 2 else priced, key=lambda s: s["job_cost"])
        assert v["preferred"] == cheapest["name"], (v["preferred"], [(s["name"], s["job_cost"]) for s in priced])


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.sampled_from([("aws", "gcp"), ("p5", "a3-highgpu-8g")]), add=st.sampled_from(["lambda", "azure"]),
       lang=st.sampled_from(["en", "zh"]))
def test_a_follow_up_adds_a_side_to_the_comparison(core, first, add, lang):
    """'what about just lambda?' after a comparison: the same comparison with a third side, the verdict naming one
    of the three, every side's line in the answer."""
    q1 = f"8x H100 for 2 weeks: {first[0]} or {first[1]}, which is cheaper?" if lang == "en" else \
        f"8 张 H100 用 2 周：{first[0]} 还是 {first[1]} 便宜？"
    _, state = core.turn(q1, {})
    r = core.turn(f"what about {add}?" if lang == "en" else f"那 {add} 呢？", state)[0].model_dump()
    v = r["verdict"]
    assert v and v["kind"] == "compare" and len(v["sides"]) == 3, r["text"][:300]
    assert v["line"] in _first_two(r)
    assert v["tie"] or v["preferred"] in {s["name"] for s in v["sides"]}
    for s in v["sides"]:
        assert f"{s['label']}: " in r["text"] or f"{s['label']}：" in r["text"], (s["label"], r["text"][:500])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flavor=st.sampled_from(["p4d.24xlarge", "g6e.xlarge", "g6.xlarge", "p5.48xlarge", "a3-highgpu-8g"]),
       job=st.sampled_from(["full fine-tuning of qwen2.5 72b", "lora fine-tuning of llama 3.1 8b",
                            "full fine-tuning of qwen2.5 7b"]), lang=st.sampled_from(["en", "zh"]))
def test_can_one_flavor_run_a_job_is_answered_first_with_its_number(core, flavor, job, lang):
    """'can a p4d.24xlarge run full fine-tuning of Qwen2.5 72B?': the first line says yes or no for one instance,
    with the need a card against what the card leaves usable, consistent with each other."""
    text = f"can one {flavor} run {job}?" if lang == "en" else f"{flavor} 能跑 {job} 吗？"
    r = core.turn(text, {})[0].model_dump()
    v = r["verdict"]
    assert v and v.get("subject") == "flavor_job", (text, r["text"][:300])
    assert r["text"].split("\n")[0] == v["line"]
    f = core.kb.flavors[v["flavor"]]
    assert v["fits_one"] == (v["need_gib"] <= f.gpu_memory_gib * 0.95 + 0.05), v
    assert f"{v['need_gib']:,.1f}" in v["line"]


# ----- 'can X do Y?': a card and a number format or runtime ------------------------------------------------------
CAP_FORMS = {"en": ["does the {g} support {w}?", "can I {job} in {w} on {g}?", "can we use {w} on {g}"],
             "zh": ["{g} 支持 {w} 吗？", "{g} 能用 {w} {job}吗", "{g} 能不能跑 {w}"]}
CAP_JOBS = {"en": ["train", "serve a model"], "zh": ["训练", "推理"]}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gpu=st.sampled_from(["V100", "T4", "A100", "A10", "L4", "L40S", "H100", "H20", "4090", "910B", "Ascend 910"]),
       what=st.sampled_from(["bf16", "fp8", "AWQ", "vLLM"]), lang=st.sampled_from(["en", "zh"]),
       form=st.integers(min_value=0, max_value=2), job=st.integers(min_value=0, max_value=1))
def test_can_a_card_do_a_format_is_answered_first_from_its_datasheet(core, gpu, what, lang, form, job):
    """'does the T4 support bf16?', 'V100 能用 bf16 训练吗', '910B 能不能跑 vLLM': yes / no / partly first, consistent with
    the card's datasheet figures on file, cited; never a question back for a model."""
    text = CAP_FORMS[lang][form].format(g=gpu, w=what, job=CAP_JOBS[lang][job])
    r = core.turn(text, {})[0].model_dump()
    v = r["verdict"]
    assert v and v["kind"] == "capability", (text, r["status"], r["text"][:200])
    assert r["text"].split("\n")[0] == v["line"] and r["citations"], (text, r["text"][:200])
    g = core.kb.gpus[v["gpu"]]
    yes = v["line"].startswith(("Yes", "可以"))
    no = v["line"].startswith(("No", "不行"))
    if what == "bf16":
        assert yes == g.bf16 and no == (not g.bf16), (text, v["line"])
    if what == "fp8":
        assert yes == bool(g.fp8_tflops), (text, v["line"])
    if what == "vLLM" and v["gpu"] == "ascend-910":
        assert no, v["line"]


def test_a_gpu_alias_shared_by_a_family_parses_the_same_under_every_hash_seed():
    """'用 910B 呢？': '910b' is both the 910B family's word and the 64 GB card's alias; which one the parse gave
    depended on the set's iteration order (PYTHONHASHSEED), so the same follow-up read 'Huawei Ascend 910B' in one
    process and '910B' in another. The parse is a pure function of the text."""
    import os
    import subprocess
    import sys
    code = ("from bot.conversation.turn import Core; c = Core.load(); "
            "print([c.parser.parse(t).slots.gpu_model for t in ('用 910B 呢？', '32G 910B 能跑吗', 'A100 or 910B')])")
    root = Path(__file__).resolve().parent.parent
    outs = {subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in (0, 1, 2, 3)}
    assert len(outs) == 1 and "910" in next(iter(outs)), outs


def _flagged_side_judged_at_list_prices(v, sound):
    """One side priced by a flagged catalog row: it is judged at its card's list prices elsewhere (`span`), and the
    verdict names it only when it is cheaper over the whole span, the sound side only when that is cheaper over it
    (or there is no span); a span that straddles decides nothing and the sound side is named with the warning."""
    key = v["cost_key"]
    if v["basis"] == "flagged_listed":
        assert v["other"] == sound["name"] and v["span"][1] < sound[key], v
    elif v["basis"] == "flagged_dearer":
        assert v["preferred"] == sound["name"] and v["span"][0] > sound[key], v
    else:
        assert v["basis"] == "flagged" and v["preferred"] == sound["name"], v


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=st.sampled_from(["Llama-3.1-8B-Instruct", "Qwen2.5-7B", "Qwen2.5-14B", "Mistral-7B"]),
       load=st.sampled_from(["50 concurrent users", "200 concurrent users", "20 req/s", "8 users"]),
       pair=st.sampled_from([("L4", "H100"), ("A100", "H100"), ("L4", "A100"), ("H100", "L4")]),
       lang=st.sampled_from(["en", "zh"]))
def test_a_flagged_price_never_withholds_a_verdict_the_list_prices_settle(core, model, load, pair, lang):
    """'How many L4s vs H100s on GCP' where one side's only price on file is a flagged catalog row: re-priced at
    that card's list prices on other clouds, a side that is cheaper (or dearer) over the whole range wins (or loses)
    outright; 68 L4 at 40k USD a month was once preferred to 3 H100 because the H100's row was flagged."""
    text = f"serve {model} on GCP for {load}. {pair[0]} or {pair[1]}, how many of each?" if lang == "en" else \
        f"GCP 上部署 {model}，{load.replace('concurrent users', '并发').replace('users', '用户')}，{pair[0]} 还是 {pair[1]}，各要几张"
    r = core.turn(text, {})[0].model_dump()
    v = r["verdict"]
    assert v and v["kind"] == "compare", (text, r["text"][:300])
    priced = [s for s in v["sides"] if s["fits"] and s["hourly"] is not None]
    sound = [s for s in priced if s["price_kind"] != "flagged"]
    if len(priced) >= 2 and len(sound) == 1:
        _flagged_side_judged_at_list_prices(v, sound[0])
        assert v["line"] in _first_two(r)
