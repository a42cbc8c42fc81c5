"""A job question that carries a second question ('..., and how much a month?', '包月还是按需?', 'can it finish within 3
days?', '显存够吗?') gets a one-line verdict for each, near the top, from the same plan the answer leads with (set7: 4
sub-questions unanswered, 3 wrong cost/speed verdicts, 1 headline contradicting its plan).

- a table of phrasings in English and Chinese, each with the sub-questions it asks: every one has its verdict line
  before the pick, and the line's numbers are the plan's (cost = the pick's job cost, or 730 h x its price an hour;
  a deadline 'yes' exactly when the plan's hours fit, with the margin; pay-per-use only under half a month's hours);
- a property over generated jobs x generated sub-questions x deadlines, in both languages, checking the same;
- a property over generated comparisons: the side preferred on cost has the lower cost on the measure compared
  (per job: hours x price x cards), and the job is planned on it (the headline's card);
- the critic's verdict-agreement invariant (bot/plan/critic.verdict_problems) flags a verdict built the wrong way
  (cheaper per hour, dearer per job; 'yes' past the deadline; a headline on the other card).
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.plan.critic import verdict_problems
from bot.plan.verdicts import COST_TIE

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
PICK = ("Pick:", "推荐:", "Yours:", "你的硬件:")

_CORE: list = []


def _core():
    """The real core, loaded once (not a fixture argument: hypothesis would print its whole repr on a failure)."""
    if not _CORE:
        from bot.conversation.turn import Core
        _CORE.append(Core.load())
    return _CORE[0]


def _asked(reply) -> dict[str, dict]:
    """The sub-questions' verdicts the answer gives, by the kind asked."""
    out: dict[str, dict] = {}
    for e in reply.rule_trace:
        if e.get("rule") == "sub-questions":
            out.update({v["asked"]: v for v in e["because"]["verdicts"]})
    return out


def _head(reply) -> list[str]:
    """The lines before the pick (the verdicts the answer leads with)."""
    lines = reply.text.split("\n")
    end = next((i for i, x in enumerate(lines) if x.startswith(PICK)), len(lines))
    return lines[:end]


def _rental(reply):
    return next(r for r in reply.recommendations if r.get("label") != "yours")


def _check(reply, kinds: list[str], deadline: float | None = None) -> None:
    """Each kind asked has a verdict line before the pick, agreeing with the plan."""
    assert reply.status == "answer", reply.text[:300]
    head = _head(reply)
    got = _asked(reply)
    for k in kinds:
        if k == "deadline" and (reply.verdict or {}).get("kind") == "how_long" and reply.verdict.get("deadline_days"):
            v = reply.verdict          # the question's own how-long verdict answers it
        elif k == "spot":
            if "spot" in got:          # a service: spot for its extra replicas, not its only one
                assert got["spot"]["line"] in head and got["spot"]["kind"] == "spot_service"
                assert _rental(reply).get("job_hours") is None
            else:                      # a training job: the spot verdict with its restarts leads
                assert (reply.verdict or {}).get("kind") == "spot", reply.text[:300]
                assert reply.verdict["line"] in head
            continue
        elif k == "fits" and k not in got:
            gv = reply.recommendations[0]
            # the card's own verdict leads: as the user's card, or as the card asked about ('fit on one L4' rented)
            assert (gv.get("label") == "yours" or any(m in str(head) for m in ("You asked about", "你问到的"))) and head, \
                reply.text[:300]
            continue
        else:
            assert k in got, (k, reply.text[:400])
            v = got[k]
        assert v["line"] in head, (k, v["line"], head)
        rent = _rental(reply)
        if k == "cost":
            if v["answer"] == "job":
                assert v["amount"] == pytest.approx(rent["job_cost"], rel=0.01, abs=0.02)
                assert v["amount"] == pytest.approx(rent["job_hours"] * rent["hourly_total"], rel=0.06)
            else:
                assert v["answer"] == "month" and rent.get("job_hours") is None, v
                assert v["amount"] == pytest.approx(rent["hourly_total"] * 730, rel=0.01)
        elif k == "deadline":
            assert v["answer"] in ("yes", "no"), (v, reply.text[:300])
            if deadline is not None:
                assert v["deadline_days"] == pytest.approx(deadline)
            plan = next((r for r in reply.recommendations if r.get("label") == "yours" and r.get("fits")), rent)
            assert v["hours"] == pytest.approx(plan["job_hours"], abs=0.06)
            met = plan["job_hours"] <= v["deadline_days"] * 24 * 1.0001
            assert v["answer"] == ("yes" if met else "no"), v
            margin = v.get("spare_h") if met else v.get("late_h")
            assert margin == pytest.approx(abs(v["deadline_days"] * 24 - v["hours"]), abs=0.2)
        elif k == "billing_mode":
            share = v["hours_month"] / 730
            hours = rent.get("job_hours") or 730
            assert v["hours_month"] == round(min(730, hours))
            assert v["preferred"] != "pay_per_use" or share <= 0.5
            assert v["preferred"] != "monthly" or share >= 0.95
        elif k == "fits":
            assert (v["answer"] == "yes") == (v["need_gib"] <= v["memory_gib"])
    broken = verdict_problems(reply.model_dump(), COST_TIE)
    assert not broken, broken


# ----- the table ----------------------------------------------------------------------------------------------------
PHRASINGS = [
    ("LoRA fine-tune Llama 3.1 8B on 200M tokens. Which GPU, and how much will it cost?", ["cost"], None),
    ("Serve Qwen2.5-7B for 50 concurrent users on AWS; what's the monthly cost?", ["cost"], None),
    ("full fine-tune qwen2.5 7b on 500M tokens on AWS, can we finish within 3 days?", ["deadline"], 3),
    ("QLoRA fine-tune Llama 3 70B on 100M tokens, 5 days deadline. Will it make it?", ["deadline"], 5),
    ("pretrain a 1B model on 20B tokens, monthly or pay-as-you-go?", ["billing_mode"], None),
    ("serve llama 3.1 8b for 30 users, should we reserve or stay on-demand?", ["billing_mode"], None),
    ("LoRA fine-tune qwen2.5 14b on 300M tokens on lambda. How much per job, and can it be done within 2 days?",
     ["deadline", "cost"], 2),
    ("Serve Llama 3.1 8B for 20 users on GCP. Will it fit on one L4, and how much a month?", ["cost", "fits"], None),
    ("full fine-tune llama 3.1 8b on 1B tokens, is spot ok? what does it cost?", ["cost", "spot"], None),
    ("train a 7B model from scratch on 50B tokens, deadline 10 days, will it finish in time and what's the total "
     "cost?", ["deadline", "cost"], 10),
    ("fine-tune mistral 7b with lora on 100M tokens, how much would it cost us, and is a monthly plan or pay per use "
     "better?", ["cost", "billing_mode"], None),
    ("serve qwen2.5 7b for 20 users, how much per month and monthly or on-demand?", ["cost", "billing_mode"], None),
    ("用 LoRA 微调 Qwen2.5-14B，数据 3 亿 token，用什么卡？包月还是按需？", ["billing_mode"], None),
    ("部署 Llama 3.1 8B 推理服务，50 个并发，每个月要多少钱？", ["cost"], None),
    ("训练 1B 模型 100 亿 token，能在 3 天内跑完吗？", ["deadline"], 3),
    ("全参微调 qwen2.5 7b，2 亿 token，5 天内能完成吗？大概多少钱？", ["deadline", "cost"], 5),
    ("部署 qwen2.5 7b，20 个并发，包月划算吗？", ["billing_mode"], None),
    ("QLoRA 微调 llama 3 70b，1 亿 token，7 天之内训得完吗？", ["deadline"], 7),
    ("部署 llama 3 70b，30 个并发，一个月多少钱？", ["cost"], None),
    ("LoRA 微调 llama 3.1 8b，2 亿 token，显存够吗？要花多少？", ["cost", "fits"], None),
    ("全参微调 qwen2.5 7b，2 亿 token，用竞价实例行吗？多少钱？", ["cost", "spot"], None),
    ("训练 1B 模型 100 亿 token，能在 3 天内跑完吗？用竞价实例行吗？", ["deadline"], 3),
    ("Full fine-tune Qwen2.5-7B on 500M tokens on AWS. Can it finish within 4 days? Is spot OK for this?",
     ["deadline", "spot"], 4),
    ("LoRA 微调 qwen2.5 7b，2 亿 token，按需还是包月？总共多少钱？", ["cost", "billing_mode"], None),
    ("serve llama 3.1 8b for 20 users on AWS, is spot ok for this?", ["spot"], None),
    ("need to pretrain a 1.3B model on 26B tokens, done within 5 days? and what's the bill?", ["deadline", "cost"], 5),
    ("fine-tune llama 3.1 70b with lora on 50M tokens on aws; how much money, can we finish within 12 hours?",
     ["deadline", "cost"], 0.5),
    ("We want to QLoRA Qwen2.5-32B on 150M tokens on GCP. What would it cost us, and will it fit on a single card?",
     ["cost", "fits"], None),
    ("Serving Mistral 7B to 100 concurrent users on Azure, monthly cost? reserved or on-demand?",
     ["cost", "billing_mode"], None),
    ("用腾讯云部署 qwen2.5 32b，40 个并发，每月花费大概多少？要不要包月？", ["cost", "billing_mode"], None),
    ("LoRA 微调 Llama 3.1 8B，8000 万 token，用阿里云，一天之内能训完吗？费用是多少？", ["deadline", "cost"], 1),
    ("部署 qwen2.5 7b，20 个并发，能用竞价实例吗？", ["spot"], None),
]

# a sub-question asked after the plan, about it: answered first from the same job's plan
FOLLOW_UPS = [
    ("serve llama 3.1 8b for 20 users on AWS", "how much per month?", ["cost"], None),
    ("lora fine-tune llama 3.1 8b on 100M tokens", "what will it cost?", ["cost"], None),
    ("lora fine-tune qwen2.5 7b on 200M tokens", "can it finish within 1 day?", ["deadline"], 1),
    ("部署 qwen2.5 7b，20 个并发", "每个月要多少钱？", ["cost"], None),
    ("全参微调 qwen2.5 7b，2 亿 token", "要花多少钱？", ["cost"], None),
    ("全参微调 qwen2.5 7b，2 亿 token", "2 天内能跑完吗？", ["deadline"], 2),
]


@pytest.mark.parametrize("first,then,kinds,deadline", FOLLOW_UPS, ids=[p[1][:30] for p in FOLLOW_UPS])
def test_a_sub_question_after_the_plan_is_answered_first(first, then, kinds, deadline):
    core = _core()
    before, state = core.turn(first, {})
    reply, _ = core.turn(then, state)
    _check(reply, kinds, deadline)
    assert _rental(reply)["flavor"] == _rental(before)["flavor"]        # the same job's plan, not another


@pytest.mark.parametrize("text,kinds,deadline", PHRASINGS, ids=[p[0][:40] for p in PHRASINGS])
def test_each_sub_question_gets_its_verdict_first(text, kinds, deadline):
    reply, _ = _core().turn(text, {})
    _check(reply, kinds, deadline)


def test_the_table_is_both_languages_and_big_enough():
    zh = [p for p in PHRASINGS if any("\u4e00" <= ch <= "\u9fff" for ch in p[0])]
    assert len(PHRASINGS) >= 20 and len(zh) >= 10 and len(PHRASINGS) - len(zh) >= 10


# ----- properties over generated jobs x sub-questions --------------------------------------------------------------
TRAIN = {"en": ["LoRA fine-tune {m} on {t}M tokens", "full fine-tune {m} on {t}M tokens",
                "QLoRA fine-tune {m} on {t}M tokens"],
         "zh": ["LoRA 微调 {m}，{t}M token", "全参微调 {m}，数据 {t}M token", "QLoRA 微调 {m}，{t}M token"]}
SERVE = {"en": ["serve {m} for {u} concurrent users", "deploy {m} as a chatbot for {u} users"],
         "zh": ["部署 {m} 推理服务，{u} 个并发", "上线 {m} 聊天服务，{u} 个并发用户"]}
MODELS = ["qwen2.5 7b", "llama 3.1 8b", "mistral 7b", "qwen2.5 14b"]
CLOUDS = {"en": ["", " on AWS", " on lambda", " on GCP"], "zh": ["", "，用 AWS", "，用阿里云", "，用腾讯云"]}
ASKS = {
    "cost": {"en": ["how much will it cost?", "what's the total cost?", "how much per month?", "what does it cost?"],
             "zh": ["要多少钱？", "总成本多少？", "每个月多少钱？", "大概花多少？"]},
    "billing_mode": {"en": ["monthly or pay-as-you-go?", "reserved or on-demand?", "should we reserve?"],
                     "zh": ["包月还是按需？", "按需还是包月？", "包月划算吗？"]},
    "deadline": {"en": ["can it finish within {d} days?", "{d} days deadline, will it make it?",
                        "can we finish in {d} days?"],
                 "zh": ["{d} 天内能跑完吗？", "{d} 天之内能完成吗？", "{d} 天内训得完吗？"]},
}


@st.composite
def _jobs(draw):
    lang = draw(st.sampled_from(["en", "zh"]))
    training = draw(st.booleans())
    m = draw(st.sampled_from(MODELS))
    if training:
        job = draw(st.sampled_from(TRAIN[lang])).format(m=m, t=draw(st.sampled_from([50, 200, 800, 3000])))
        kinds = draw(st.lists(st.sampled_from(["cost", "billing_mode", "deadline"]), min_size=1, max_size=3,
                              unique=True))
    else:
        job = draw(st.sampled_from(SERVE[lang])).format(m=m, u=draw(st.sampled_from([5, 20, 50])))
        kinds = draw(st.lists(st.sampled_from(["cost", "billing_mode"]), min_size=1, max_size=2, unique=True))
    days = draw(st.sampled_from([1, 2, 3, 5, 10]))
    sep = "，" if lang == "zh" else ", "
    text = job + draw(st.sampled_from(CLOUDS[lang])) + sep + " ".join(
        draw(st.sampled_from(ASKS[k][lang])).format(d=days) for k in kinds)
    return text, kinds, days if "deadline" in kinds else None


@settings(max_examples=30, **SETTINGS)
@given(_jobs())
def test_generated_jobs_answer_every_sub_question(job):
    text, kinds, days = job
    reply, _ = _core().turn(text, {})
    if reply.status != "answer":
        return           # a question back (which model size?) answers nothing yet
    _check(reply, kinds, days)


# ----- comparisons: the cheaper side is cheaper per job, and the job is planned on it ---------------------------------
PAIRS = [("L4", "A10"), ("A100", "H100"), ("L40S", "A100"), ("H100", "H200"), ("A10", "T4"), ("L4", "L40S")]
VS = {"en": ["{job}. {a} or {b}, which is cheaper?", "{job}: {a} vs {b}, which costs less?",
             "{job}, is {a} or {b} more cost-effective?"],
      "zh": ["{job}，{a} 还是 {b} 更划算？", "{job}，{a} 和 {b} 哪个便宜？", "{job}，用 {a} 还是 {b} 省钱？"]}


@settings(max_examples=20, **SETTINGS)
@given(st.sampled_from(["en", "zh"]), st.booleans(), st.sampled_from(PAIRS), st.sampled_from(MODELS[:2]),
       st.integers(0, 2))
def test_the_cheaper_side_costs_less_for_the_job(lang, training, pair, model, form):
    job = (TRAIN if training else SERVE)[lang][0].format(m=model, t=200, u=20)
    text = VS[lang][form].format(job=job, a=pair[0], b=pair[1])
    reply, _ = _core().turn(text, {})
    v = reply.verdict or {}
    if v.get("kind") != "compare" or v.get("tie") or not v.get("preferred") or v.get("basis") not in (
            "job", "month", "mtok"):
        return
    sides = {s["name"]: s for s in v["sides"]}
    best, other, key = sides[v["preferred"]], sides[v["other"]], v["cost_key"]
    assert best[key] <= other[key] * (1 + COST_TIE) + 0.005, (text, best[key], other[key])
    if key == "job_cost":       # per job: the hours x the price an hour of all the side's cards, not the price alone
        for s in (best, other):
            if s.get("price_kind") != "per_card":
                assert s["job_cost"] == pytest.approx(s["hours"] * s["hourly"], rel=0.06), s
    assert v["line"] == reply.text.split("\n")[0]
    assert not verdict_problems(reply.model_dump(), COST_TIE)


# ----- the critic flags a verdict that contradicts its numbers ------------------------------------------------------
def _side(name, hours, hourly, gpus=1):
    return {"name": name, "gpu": name.lower(), "hours": hours, "hourly": hourly, "gpus": gpus,
            "job_cost": round(hours * hourly, 2), "monthly": hourly * 730, "price_kind": "list"}


def test_critic_flags_cheaper_per_hour_but_dearer_per_job():
    # L4 is cheaper an hour (0.8 against 1.3) but 3x slower: 24 USD against 13 USD for the job
    v = {"kind": "compare", "basis": "job", "cost_key": "job_cost", "preferred": "L4", "other": "A10",
         "tie": False, "sides": [_side("L4", 30, 0.8), _side("A10", 10, 1.3)], "line": "L4: cheaper."}
    found = verdict_problems({"status": "info", "verdict": v, "recommendations": [], "rule_trace": []}, COST_TIE)
    assert found and "prefers L4" in found[0]["what"] and found[0]["line"] == "L4: cheaper."
    v["preferred"], v["other"] = "A10", "L4"
    assert not verdict_problems({"status": "info", "verdict": v, "recommendations": [], "rule_trace": []}, COST_TIE)


def test_critic_flags_a_deadline_yes_past_the_deadline_and_a_wrong_margin():
    rec = {"label": "pick", "job_hours": 80.0, "gpu": "h100"}
    v = {"kind": "how_long", "answer": "yes", "deadline_days": 3, "hours": 80.0, "spare_h": 0.0, "line": "Yes."}
    found = verdict_problems({"status": "answer", "verdict": v, "recommendations": [rec], "rule_trace": []}, COST_TIE)
    assert any("deadline verdict 'yes'" in p["what"] for p in found)
    v.update(answer="no", late_h=8.0)
    assert not verdict_problems({"status": "answer", "verdict": v, "recommendations": [rec], "rule_trace": []},
                                COST_TIE)


def test_critic_flags_a_headline_on_the_card_the_comparison_did_not_prefer():
    v = {"kind": "compare", "basis": "job", "cost_key": "job_cost", "preferred": "A10", "other": "L4", "tie": False,
         "sides": [_side("L4", 30, 0.8), _side("A10", 10, 1.3)], "chosen": {"gpu_model": "a10"}, "line": "A10."}
    recs = [{"label": "pick", "gpu": "l4", "flavor": "g6.xlarge"}]
    found = verdict_problems({"status": "answer", "verdict": v, "recommendations": recs, "rule_trace": []}, COST_TIE)
    assert any("headline card" in p["what"] for p in found)


def test_critic_flags_a_sub_question_verdict_off_the_plan():
    recs = [{"label": "pick", "job_cost": 100.0, "job_hours": 10.0, "hourly_total": 10.0}]
    trace = [{"rule": "sub-questions", "because": {"verdicts": [
        {"kind": "cost", "answer": "job", "amount": 10.0, "line": "Cost: 10"},
        {"kind": "billing_mode", "preferred": "monthly", "hours_month": 10, "line": "Monthly"}]}}]
    found = verdict_problems({"status": "answer", "verdict": None, "recommendations": recs, "rule_trace": trace},
                             COST_TIE)
    assert {p["line"] for p in found} == {"Cost: 10", "Monthly"}


# ----- 'wouldn't N x <card> be cheaper?' after a plan: the verdict's cost side and the change line agree ---------------
REPLANS = [("lora fine-tune qwen2.5 7b on 200M tokens", "wouldn't 8x A10 be cheaper?"),
           ("全参微调 qwen2.5 7b，2 亿 token", "换成 4 张 4090 会不会便宜点？"),
           ("full fine-tune llama 3.1 8b on 500M tokens", "would 4x L40S be cheaper?"),
           ("LoRA 微调 qwen2.5 14b，3 亿 token", "用 2 张 A100 会更便宜吗？")]


@pytest.mark.parametrize("first,then", REPLANS, ids=[p[1][:30] for p in REPLANS])
def test_a_cheaper_card_follow_up_agrees_with_its_plan(first, then):
    core = _core()
    _, state = core.turn(first, {})
    reply, _ = core.turn(then, state)
    v = reply.verdict or {}
    if v.get("kind") == "why_not" and v.get("cost_key") and v.get("winner") in ("pick", "alt"):
        win, lose = (v["pick"], v["alt"]) if v["winner"] == "pick" else (v["alt"], v["pick"])
        assert win[v["cost_key"]] <= lose[v["cost_key"]] * (1 + COST_TIE) + 0.005, v
    recs = reply.recommendations
    head = recs[0] if recs and recs[0].get("label") == "yours" and recs[0].get("fits") else \
        next((r for r in recs if r.get("label") != "yours"), None)
    for e in reply.rule_trace:
        if e.get("rule") == "fleet_delta" and head and not head.get("mixed"):
            assert e["because"]["gpu_after"] == head["gpu"], (e["because"], head.get("gpu"), reply.text[:400])
    assert not verdict_problems(reply.model_dump(), COST_TIE)
