"""The critic (issue 29): named invariants over every answer, checked on GENERATED jobs across the three surfaces
(ask text, ask --json, Slack blocks), table rows written from our own arithmetic, the regression rows the issue's
harmful answers became, and for each invariant a proof that its test fails without it.

Each property is one function over a reply (`_broken_*` returns the sentences that break it), so the generated
jobs, the regression rows and the 'fails without it' checks share one definition of what holding means.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.plan.critic import Critic, JobView, check_invariants, stated_targets
from bot.records.models import AnswerView
from bot.surfaces.slack.blocks import blocks, details_blocks

RULES = Path(__file__).resolve().parents[1] / "rules"
DAY = 24.0


# ----- the invariants as properties of a reply ---------------------------------------------------------------------
def _offered(r: dict) -> list[dict]:
    """The plans the answer offers as rentals (not the user's own cards)."""
    return [x for x in r["recommendations"] if x.get("label") != "yours"]


def _broken_plausibility(r: dict, inv: dict) -> list[str]:
    """No offered plan trains at under the MFU floor on several GPUs, runs past the horizon, or fills its cards
    past the allocator slack."""
    out = []
    floor, horizon = inv["mfu-floor"].limit("mfu_min"), inv["wall-time-horizon"].limit("days_max")
    slack = inv["memory-slack"].limit("headroom_min")
    limit_h = max(horizon, r["slots"].get("deadline_days") or 0) * DAY
    for x in _offered(r):
        gpus = (x.get("gpus_total") or 0) * max(1, x.get("replicas") or 1)
        if r["intent"] in ("train", "finetune") and x.get("mfu") is not None and gpus >= 2 and x["mfu"] < floor:
            out.append(f"{x['flavor']} offered at MFU {x['mfu']} on {gpus} GPUs")
        if x.get("job_hours") and x["job_hours"] > limit_h:
            out.append(f"{x['flavor']} offered for {x['job_hours'] / DAY:,.0f} days")
        if x.get("per_gpu_gib") and not x.get("mixed") and x["per_gpu_gib"] > x["gpu_memory_gib"] * (1 - slack) + 0.05:
            out.append(f"{x['flavor']} offered at {x['per_gpu_gib']} of {x['gpu_memory_gib']} GiB")
    for x in r["recommendations"]:
        # their own cards: a plan that holds the job for years, or at under the MFU floor, is said not to be one
        if x.get("label") != "yours" or not x.get("fits"):
            continue
        slow = x.get("job_hours") and x["job_hours"] > limit_h
        idle = r["intent"] in ("train", "finetune") and x.get("mfu") is not None and x["mfu"] < floor \
            and (x.get("gpus_total") or 0) >= 2
        if (slow or idle) and not x.get("implausible"):
            out.append(f"their {x['gpu_name']} x {x['gpus_total']} said to do it in {x['job_hours']} h at MFU {x.get('mfu')}")
    return out


STATED = {"deadline": "deadline_days", "budget": "budget_amount", "ttft": "ttft_ms", "tpot": "tpot_ms",
          "users": "concurrency", "rate": "qps"}


def _broken_targets(r: dict, t, block_text: str) -> list[str]:
    """Every target the user stated is in `targets`, met / missed / not judged, and said in the first lines of the
    text and in the Slack blocks; a target said as met is met by the first plan's own figure."""
    if r["status"] != "answer" or not r["recommendations"]:
        return []
    out = []
    # a rate said per day is judged at its busy hours' peak; live streams are the users of a speech or video model
    alias = {"rate_peak": "rate", "streams": "users"}
    names = {alias.get(x["target"], x["target"]) for x in r["targets"]}
    for name, slot in STATED.items():
        if r["slots"].get(slot) and name not in names and not (name == "ttft" and r["slots"].get("e2e_ms")):
            if name in ("ttft", "tpot", "users", "rate") and r["intent"] != "inference":
                continue
            out.append(f"stated {name} has no verdict in targets")
    label = t.say("label.targets", r["lang"])
    lines = r["text"].split("\n")
    head = next((i for i, line in enumerate(lines) if line.startswith(label + ":")), None)
    if r["targets"] and (head is None or head > 8):
        out.append(f"targets said at line {head}, not in the first lines")
    if r["targets"] and label not in block_text:
        out.append("targets missing from the Slack blocks")
    for x in r["targets"]:
        if (x["met"] is True and x["plan"] is not None and x["target"] in ("deadline", "budget", "ttft", "tpot")
                and x["plan"] > x["asked"] * 1.001):
                out.append(f"{x['target']} said met at {x['plan']} over {x['asked']}")
        if x["target"] == "deadline" and x["plan"] is not None:
            first = r["recommendations"][0]
            if first.get("job_hours") and abs(first["job_hours"] / DAY - x["plan"]) > 0.01 + 0.001 * x["plan"]:
                out.append(f"deadline verdict {x['plan']} days, plan {first['job_hours'] / DAY:.2f}")
    return out


def _broken_completeness(r: dict) -> list[str]:
    """A stated amount of work (tokens, dataset x epochs, items) yields a time and, on a priced plan, a cost."""
    work = r["slots"].get("tokens") or (r["slots"].get("dataset_items") and r["slots"].get("epochs"))
    offered = _offered(r)
    if r["status"] != "answer" or not work or not offered or r["intent"] == "inference":
        return []
    pick = offered[0]
    out = []
    if not pick.get("job_hours"):
        out.append(f"{pick['flavor']}: work stated, no time")
    if pick.get("price_per_hour") is not None and not pick.get("mixed") and pick.get("job_cost") is None:
        out.append(f"{pick['flavor']}: work stated and priced, no cost")
    return out


_TIGHT = re.compile(r"(?:too tight|太紧)\s*[（(]([\d.,]+) (?:of|/) ([\d.,]+) GiB")


def _broken_consistency(r: dict, block_text: str) -> list[str]:
    """The surfaces agree with their own numbers: no blank where a number belongs, 'too tight' only when it is, the
    Why line's GiB the JSON memory's, a considered row's reason that of its data, and the blocks name the pick."""
    out = []
    text = r["text"] + "\n" + r.get("details", "")       # the whole answer: the short form and its details
    if re.search(r"(?:in|超出) - GiB", text):
        out.append("a blank card size ('- GiB')")
    for need, have in _TIGHT.findall(text):
        if float(need.replace(",", "")) < 0.95 * float(have.replace(",", "")):
            out.append(f"'too tight' at {need} of {have} GiB")
    offered = _offered(r)
    if r["status"] == "answer" and offered and r["memory"] and not offered[0].get("mixed"):
        mem = f"{r['memory']['per_gpu_gib']:.1f}"
        why = next((line for line in text.split("\n") if line.startswith(("Why:", "理由:"))), "")
        if why and mem not in why:
            out.append(f"Why line without the memory {mem} GiB: {why[:80]}")
        if offered[0]["flavor"] not in block_text:
            out.append("the Slack blocks do not name the pick")
    for x in r["considered"]:
        if x.get("ruled_out", "") and x["ruled_out"].startswith("implausible.") and not x.get("implausible"):
            out.append(f"{x['flavor']} ruled implausible without a reason")
    return out


def _broken_trace(r: dict) -> list[str]:
    """Every plan the critic removed is in rule_trace as a fired critic rule."""
    fired = {e["rule"] for e in r["rule_trace"] if e["fired"]}
    return [f"{x['flavor']} removed by {x['ruled_out']} but the trace does not say so"
            for x in r["considered"] if (x.get("ruled_out") or "").startswith("implausible.")
            and "critic." + x["ruled_out"].split(".", 1)[1] not in fired]


_NAMED = re.compile(r"(?<![A-Za-z0-9])([A-Za-z][A-Za-z0-9.\-]*[A-Za-z.\-]\d+(?:\.\d+)?[BbMm])(?![A-Za-z0-9])")


def _broken_honesty(r: dict, question: str) -> list[str]:
    """A model named that the knowledge base does not know is never silently another: an answer sized without a
    model on file says the name it was asked about and what it was sized as in its first line (or it asks)."""
    if r["status"] != "answer" or r["slots"].get("model") or not r["slots"].get("params_b"):
        return []
    named = [w for w in _NAMED.findall(question) if w.lower() in {u.lower() for u in UNKNOWN}]
    first = r["text"].split("\n")[0]
    return [f"{w} answered without saying so in the first line: {first[:80]}" for w in named if w not in first]


def _all_broken(core, r: dict, question: str = "") -> list[str]:
    block_text = str(blocks(r, core.templates))
    if r.get("view"):                                    # and what the Details button brings
        block_text += str([b.to_dict() for b in details_blocks(AnswerView.model_validate(r["view"]), core.templates,
                                                               r["lang"])])
    inv = core.rules.invariants
    return (_broken_plausibility(r, inv) + _broken_targets(r, core.templates, block_text) + _broken_completeness(r)
            + _broken_consistency(r, block_text) + _broken_trace(r) + _broken_honesty(r, question))


# ----- generated jobs -----------------------------------------------------------------------------------------------
PROVIDERS = {"en": {"huaweicloud": "on Huawei Cloud", "aws": "on AWS", "gcp": "on GCP", None: ""},
             "zh": {"huaweicloud": "在华为云上", "aws": "在 AWS 上", "gcp": "在谷歌云上", None: ""}}
LLMS = ["qwen2.5-7b", "llama-3.1-8b", "qwen2.5-14b", "qwen2.5-32b", "llama-3.1-70b", "deepseek-v3"]
UNKNOWN = ["FooLM-13B", "ZetaChat-7B"]


@st.composite
def jobs(draw) -> str:
    """A question as a user writes it: a job (pre-training, fine-tuning, serving, a vision model, an unknown
    model), an amount of work, and optional deadline, budget, latency and load targets, own cards and provider,
    in English or Chinese."""
    lang = draw(st.sampled_from(["en", "zh"]))
    kind = draw(st.sampled_from(["pretrain", "finetune", "serve", "vision", "unknown"]))
    parts: list[str] = []
    if kind == "pretrain":
        size, tokens = draw(st.sampled_from([1, 7, 13, 34, 70])), draw(st.sampled_from(["50B", "300B", "1T", "2T"]))
        parts.append(f"pretrain a {size}B model on {tokens} tokens" if lang == "en"
                     else f"从头预训练一个 {size}B 的模型，{tokens} tokens")
    elif kind in ("finetune", "unknown"):
        model = draw(st.sampled_from(LLMS if kind == "finetune" else UNKNOWN))
        method = draw(st.sampled_from(["LoRA", "QLoRA", "full"]))
        tokens = draw(st.sampled_from(["20M", "100M", "1B", "5B"]))
        parts.append(f"{method} fine-tune {model} on {tokens} tokens" if lang == "en"
                     else f"用 {method} 微调 {model}，{tokens} tokens")
    elif kind == "serve":
        model = draw(st.sampled_from(LLMS[:5] + ["bge-large"]))
        users = draw(st.sampled_from([5, 50, 300]))
        parts.append(f"serve {model} for {users} concurrent users" if lang == "en"
                     else f"部署 {model}，{users} 个并发用户")
        if draw(st.booleans()) and model != "bge-large":
            ttft, tpot = draw(st.sampled_from([300, 800, 2000])), draw(st.sampled_from([20, 50, 100]))
            parts.append(f"first token under {ttft} ms, {tpot} ms per token" if lang == "en"
                         else f"首 token {ttft} 毫秒以内，每个 token {tpot} 毫秒")
    else:
        model = draw(st.sampled_from(["yolov8m", "resnet-50"]))
        images, epochs = draw(st.sampled_from(["50k", "1M"])), draw(st.sampled_from([10, 100]))
        parts.append(f"train {model} on {images} images for {epochs} epochs" if lang == "en"
                     else f"训练 {model}，{images} 张图片，{epochs} 个 epoch")
    if kind != "serve" and draw(st.booleans()):
        days = draw(st.sampled_from([3, 30, 90]))
        parts.append(f"within {days} days" if lang == "en" else f"{days} 天内完成")
    if draw(st.integers(0, 3)) == 0:
        amount = draw(st.sampled_from([500, 20000, 1000000]))
        parts.append(f"budget {amount} USD" if lang == "en" else f"预算 {amount} 美元")
    own = draw(st.sampled_from([None, None, "8 A100", "4 4090", "1 L4"]))
    if own:
        n, gpu = own.split()
        parts.insert(0, f"we have {n} {gpu}s" if lang == "en" else f"我们有 {n} 张 {gpu}")
    provider = PROVIDERS[lang][draw(st.sampled_from(list(PROVIDERS[lang])))]
    if provider:
        parts.append(provider)
    return (", " if lang == "en" else "，").join(parts)


@functools.lru_cache(maxsize=1)
def _core():
    """The real core, outside the fixtures so that hypothesis's failure report does not print all of it."""
    from bot.conversation.turn import Core
    return Core.load()


@settings(max_examples=45, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(question=jobs())
def test_every_invariant_holds_on_generated_jobs(question):
    """On any generated job, in text, JSON and Slack blocks, no invariant is broken, and nothing crashes."""
    core = _core()
    r = core.turn(question, {})[0].model_dump()
    assert r["status"] in ("answer", "follow_up", "info", "out_of_scope")
    broken = _all_broken(core, r, question)
    assert not broken, (question, broken)


# ----- the harmful answers, as regression rows -----------------------------------------------------------
# (question, the invariant whose test fails without it, what an engineer expects instead)
HARMFUL = [
    # a LoRA of a 671B MoE gathered over TCP on 128 PCIe cards at 0.1 % MFU for 27 days: no plan, not that plan
    ("LoRA fine-tune DeepSeek-V3 671B on Huawei Cloud on 1B tokens", "mfu-floor"),
    ("在华为云上用 LoRA 微调 DeepSeek-V3，10 亿 tokens", "mfu-floor"),
    # a 405B pre-train on 15T tokens: Huawei Cloud's 4,096 H100 PCIe take 1.7 years (6 x 405e9 x 15e12 FLOPs at
    # 24 % of 756 TFLOPS); not offered, the B200 and H100 SXM clusters elsewhere (199 and 362 days) are
    ("pretrain a 405B model on 15T tokens on Huawei Cloud", "wall-time-horizon"),
    # a 70B pre-train in three months: T4 and L4 rows at 1-6 % MFU for 3 to 8 years stay out of the offered plans
    ("我们要预训练一个 70B 的模型，数据 2T tokens，三个月内完成", "wall-time-horizon"),
    # their 8 L4s hold a 13B pre-train on 2T tokens, for 20 years: a verdict, not a plan (the rental follows)
    ("we have 8 L4, pretrain a 13B model on 2T tokens", "wall-time-horizon"),
]


@pytest.mark.parametrize("question, invariant", HARMFUL)
def test_harmful_answers_are_caught(core, question, invariant):
    r = core.turn(question, {})[0].model_dump()
    assert not _all_broken(core, r), _all_broken(core, r)
    trace = {e["rule"]: e for e in r["rule_trace"]}
    assert trace[f"critic.{invariant}"]["fired"], trace.get(f"critic.{invariant}")


def test_no_sane_plan_says_why_and_what_would_work(core):
    """Nothing sane on any cloud: a plain 'no sane plan, because ..., what would work' and no fabricated plan,
    no memory verdict against a blank card ('does not fit in - GiB'), in the question's language."""
    for question, lang in (("LoRA fine-tune DeepSeek-V3 671B on Huawei Cloud on 1B tokens", "en"),
                           ("在华为云上用 LoRA 微调 DeepSeek-V3，10 亿 tokens", "zh")):
        r = core.turn(question, {})[0].model_dump()
        first = r["text"].split("\n")[0]
        assert r["recommendations"] == [] and r["lang"] == lang
        assert ("No sane plan" in first and "What would work" in first) if lang == "en" else "没有可行的方案" in first
        assert "MFU" in first and not any(c["item"] == "oom" for c in r["checklist"])


def _without(core, invariant: str):
    """The same core with one invariant switched off (as if its check were deleted)."""
    from bot.conversation.turn import Core
    from bot.plan.advisor import Advisor
    rules = dataclasses.replace(core.rules, invariants={k: v for k, v in core.rules.invariants.items()
                                                         if k != invariant})
    return Core(core.kb, rules, core.parser, core.forms, core.templates,
                Advisor(core.kb, rules, core.templates, core.advisor.default_provider))


@pytest.mark.parametrize("question, invariant", HARMFUL[:3:2] + HARMFUL[4:])
def test_each_regression_row_fails_without_its_invariant(core, question, invariant):
    """The rows above are not tests that cannot fail: with the invariant switched off, the same question breaks
    the same property (the plan the issue called harmful is offered again)."""
    weak = _without(core, invariant)
    r = weak.turn(question, {})[0].model_dump()
    assert _broken_plausibility(r, core.rules.invariants), r["text"][:300]


def test_the_unpriced_feasible_plan_is_offered_for_a_quote():
    """Rows from our own arithmetic: the priced plan misses the 30-day deadline (40 days), the unpriced Ascend one
    meets it (25 days): the Ascend one goes first, marked for a quote; with a priced plan that meets it, nothing
    moves."""
    critic = _critic()
    priced = _row("p5s", hourly=10.0, hours=40 * DAY, breaks=["deadline"])
    ascend = _row("snt9b", hourly=None, hours=25 * DAY)
    rows = [priced, ascend]
    entry = critic.promote_unpriced(rows, "en")
    assert entry["fired"] and rows[0] is ascend and ascend["quote"]
    ok = _row("p5s-big", hourly=20.0, hours=20 * DAY)
    rows = [ok, _row("snt9b", hourly=None, hours=25 * DAY)]
    assert not _critic().promote_unpriced(rows, "en")["fired"] and rows[0] is ok


def test_without_promotion_the_priced_miss_is_picked():
    """choose() alone picks the priced plan that misses the deadline over the unpriced one that meets it: the
    promotion is what changes that (this test fails without it)."""
    from bot.plan.choose import choose
    priced = _row("p5s", hourly=10.0, hours=40 * DAY, breaks=["deadline"])
    ascend = _row("snt9b", hourly=None, hours=25 * DAY)
    recs, _ = choose([priced, ascend], lambda r: True)
    assert recs[0] is priced
    rows = [_row("p5s", hourly=10.0, hours=40 * DAY, breaks=["deadline"]), _row("snt9b", hourly=None, hours=25 * DAY)]
    _critic().promote_unpriced(rows, "en")
    recs, _ = choose(rows, lambda r: True)
    assert recs[0]["id"] == "snt9b"


@pytest.mark.parametrize("question", ["LoRA fine-tune FooLM-13B on 100M tokens", "用 LoRA 微调 ZetaChat-7B，1 亿 tokens",
                                      "serve ZetaChat-7B for 20 users"])
def test_an_unknown_model_is_said_not_swapped(core, question):
    """Sized by the size in its name, and the first line says so (the name, and what it was sized as)."""
    r = core.turn(question, {})[0].model_dump()
    assert r["status"] == "answer" and not _broken_honesty(r, question)
    assert re.search(r"\d+B", r["text"].split("\n")[0])


# ----- table rows from our own arithmetic -------------------------------------------------------------------------
def _critic() -> Critic:
    invariants, problems = check_invariants(RULES)
    assert not problems, [str(p) for p in problems]
    return Critic(invariants)


def _row(name: str, gpu: str = "h100", gpus: int = 8, mfu: float | None = None, hours: float | None = None,
         hourly: float | None = 10.0, need: float = 40.0, card: float = 80.0, breaks=None) -> dict:
    return {"id": name, "flavor": SimpleNamespace(flavor=name, gpu_memory_gib=card, price=None), "gpu": gpu,
            "gpus_total": gpus, "replicas": 1, "ruled_out": None, "sized": SimpleNamespace(mfu=mfu),
            "estimate": SimpleNamespace(per_gpu_gib=need), "hours": hours, "hourly": hourly,
            "job_cost": hourly * hours if hourly and hours else None, "breaks": list(breaks or [])}


@pytest.mark.parametrize("row, training, deadline, ruled", [
    # 128 GPUs at 0.1 % MFU: under the 10 % floor
    (dict(gpus=128, mfu=0.001, hours=655), True, None, "mfu-floor"),
    # one GPU at 5 %: a narrow model's own MFU, nothing waits on a link: kept
    (dict(gpus=1, mfu=0.05, hours=10), True, None, None),
    # serving has no MFU to judge
    (dict(gpus=8, mfu=0.05), False, None, None),
    # 400 days is over the 365-day horizon; with a 500-day deadline the user asked for it
    (dict(gpus=8, mfu=0.3, hours=400 * DAY), True, None, "wall-time-horizon"),
    (dict(gpus=8, mfu=0.3, hours=400 * DAY), True, 500, None),
    # 79 of 80 GiB leaves 1.25 % free, under the 5 % slack; 75 of 80 leaves 6.25 %
    (dict(gpus=8, mfu=0.3, hours=100, need=79.0), True, None, "memory-slack"),
    (dict(gpus=8, mfu=0.3, hours=100, need=75.0), True, None, None),
])
def test_plausibility_rows(row, training, deadline, ruled):
    rows = [_row("x", **row)]
    trace = _critic().prune(rows, JobView(training=training, deadline_days=deadline), "en")
    assert rows[0]["ruled_out"] == (f"implausible.{ruled}" if ruled else None)
    fired = [e["rule"] for e in trace if e["fired"]]
    assert fired == ([f"critic.{ruled}"] if ruled else [])


def test_scale_efficiency_against_the_same_card():
    """The same H100 reaches 40 % on one instance; 64 of them at 15 % need 40 / 15 = 2.7x the GPUs: out. At 25 %
    (1.6x) it stays, and an A100 row is not judged against the H100's best."""
    rows = [_row("one", gpus=8, mfu=0.40, hours=900), _row("many", gpus=64, mfu=0.15, hours=300),
            _row("ok", gpus=32, mfu=0.25, hours=200), _row("a100", gpu="a100", gpus=64, mfu=0.15, hours=300)]
    _critic().prune(rows, JobView(training=True), "en")
    by = {r["id"]: r["ruled_out"] for r in rows}
    assert by == {"one": None, "many": "implausible.scale-efficiency", "ok": None, "a100": None}
    assert [r["id"] for r in rows][-1] == "many"          # the ruled-out row goes after the sane ones


@pytest.mark.parametrize("slots, rec, serving, expect", [
    # 29.7 days against 30: met, 0.3 days to spare
    ({"deadline_days": 30}, {"job_hours": 712.8}, False, [("deadline", 29.7, True, -0.3)]),
    # 45 days against 30: missed by 15
    ({"deadline_days": 30}, {"job_hours": 1080}, False, [("deadline", 45.0, False, 15.0)]),
    # 610,448 spent of 500,000: missed by 110,448
    ({"budget_amount": 500000, "budget_currency": "USD", "budget_period": "total"},
     {"budget": {"spend": 610448.0}}, False, [("budget", 610448.0, False, 110448.0)]),
    # 180 ms first token against 500: met; 45 ms a token against 30: missed by 15
    ({"ttft_ms": 500, "tpot_ms": 30, "concurrency": 50},
     {"ttft_ms": 180, "tpot_ms": 45.0, "replicas": 3, "replica_concurrency": 21, "breaks": ["latency"]}, True,
     [("ttft", 180, True, -320), ("tpot", 45.0, False, 15.0), ("users", 63, False, -13)]),
    # no speed on file: not judged, never silently dropped
    ({"tpot_ms": 30}, {"tpot_ms": None}, True, [("tpot", None, None, None)]),
])
def test_stated_targets_rows(slots, rec, serving, expect):
    got = [(x["target"], x["plan"], x["met"], x["by"]) for x in stated_targets(slots, rec, serving, encoder=False)]
    assert got == expect


# ----- the invariants as data -------------------------------------------------------------------------------------
def test_invariants_are_validated_as_data(tmp_path):
    """critic.yaml declares every invariant the code implements, with the limits it reads and sources behind its
    thresholds; a missing limit, an unknown source or an invariant nobody implements is named with its fix."""
    invariants, problems = check_invariants(RULES, None)
    assert not problems and set(invariants) >= {"mfu-floor", "wall-time-horizon", "targets-stated"}
    assert all(inv.cite for inv in invariants.values() if inv.limits)
    text = (RULES / "critic.yaml").read_text(encoding="utf-8")
    broken = text.replace("limits: {mfu_min: 0.10, min_gpus: 2}", "limits: {min_gpus: 2}") \
        .replace("cite: [llama3-paper]", "cite: [llama-3-paper]").replace("id: memory-slack", "id: memory-slak")
    (tmp_path / "critic.yaml").write_text(broken, encoding="utf-8")
    _inv, problems = check_invariants(tmp_path, {"palm-paper", "llama3-paper", "megatron-lm-3d-parallelism",
                                                 "hf-memory-anatomy"})
    said = " | ".join(str(p) for p in problems)
    assert "missing limit(s) mfu_min" in said and "unknown source 'llama-3-paper'" in said
    assert "did you mean 'llama3-paper'" in said and "no check implements" in said and "memory-slack" in said


def test_kb_validate_sees_the_critic(core):
    """The real rules load with every invariant (gpu-advisor kb validate runs the same check)."""
    from bot.plan.critic import CHECKS
    assert set(core.rules.invariants) == set(CHECKS)
    assert all(math.isfinite(v) for inv in core.rules.invariants.values() for v in inv.limits.values())


# ----- the properties can fail: each without what makes it hold ---------------------------------------------------
def test_targets_property_fails_without_the_targets(core, monkeypatch):
    """With the critic's targets switched off, a stated deadline has no verdict and the property says so."""
    import bot.plan.job_stage as job_stage      # the stage that says each stated target, met or missed
    question = "pretrain a 7B model on 1T tokens within 30 days"
    r = core.turn(question, {})[0].model_dump()
    assert not _broken_targets(r, core.templates, str(blocks(r, core.templates)))
    monkeypatch.setattr(job_stage, "stated_targets", lambda *a, **k: [])
    r = core.turn(question, {})[0].model_dump()
    assert "stated deadline has no verdict in targets" in _broken_targets(r, core.templates, str(blocks(r, core.templates)))


def test_consistency_property_catches_the_reviewed_contradictions(core):
    """The sentences set1's reviewer found ('too tight (3.0 of 16 GiB ...)', 'does not fit in - GiB') break the
    consistency property; the renderer's own sentence for that row (more cards than an instance has) does not."""
    from bot.render.reply import _lost
    base = {"text": "", "status": "info", "recommendations": [], "considered": [], "memory": None}
    assert _broken_consistency({**base, "text": "  cci-t4-x1  1x T4  too tight (3.0 of 16 GiB, under 5 % spare)"}, "")
    assert _broken_consistency({**base, "text": "  fail  OOM  1477.7 GiB per GPU does not fit in - GiB."}, "")
    row = {"ruled_out": "no_fit", "per_gpu_gib": 3.1, "gpu_memory_gib": 16.0, "need_gpus": 8, "gpu_count": 1}
    said = _lost(core.templates, row, {}, "en")
    assert "8 cards" in said and not _broken_consistency({**base, "text": said}, "")


def test_honesty_property_fails_without_the_line(core):
    r = core.turn("LoRA fine-tune FooLM-13B on 100M tokens", {})[0].model_dump()
    assert not _broken_honesty(r, "LoRA fine-tune FooLM-13B on 100M tokens")
    r["text"] = r["text"].split("\n", 1)[1]          # as it was before: the plan first, the name dropped
    assert _broken_honesty(r, "LoRA fine-tune FooLM-13B on 100M tokens")
