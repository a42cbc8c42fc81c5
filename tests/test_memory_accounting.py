"""Memory accounting (second wave, class 'memory'): 'how much VRAM / 显存够不够 / will it fit in memory' is answered
with every term and its number (weights, gradients, optimizer state, activations, KV cache, overhead), the total
against the card's memory, and the plan's own GiB a card term by term against its card; the terms sum to each total
said (within rounding) and 'fits' / 'does not fit' agrees with the total against the card's usable memory.

Before: the plan's part said '22.1 GiB a card over 1 x L4' (no card memory, no terms) and '显存够不够: 4090 上全量微调
qwen2.5-7b' got no terms at all. The critic checks the same on every reply (bot/plan/critic.verdict_problems,
verdict-agreement: bot/plan/verdicts.memory_problems)."""
from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.plan.verdicts import memory_problems

NUM = re.compile(r"([\d,]+\.\d)")
TERMS = {"en": ("weights", "gradients", "optimizer state", "activations", "KV cache", "overhead"),
         "zh": ("权重", "梯度", "优化器状态", "激活", "KV 缓存", "开销")}


def _f(x: str) -> float:
    return float(x.replace(",", ""))


def _terms(group: str) -> list[float]:
    return [_f(x) for x in NUM.findall(group)]


def parse(first: str, lang: str) -> dict:
    """The numbers a memory line says: the one-copy total and its terms, the card it is held against (memory,
    usable, fits), and the plan's GiB a card, card memory, terms and 'fits'."""
    out: dict = {}
    if lang == "en":
        m = re.match(r"Memory: about ([\d,]+\.\d) GiB for the whole job on one card as stated \(([^)]*)\)", first)
        assert m, first
        out["total"], out["terms"], out["names"] = _f(m.group(1)), _terms(m.group(2)), m.group(2)
        c = re.search(r": (fits|more than) one .*?\(([\d.]+) GiB, ([\d.]+) GiB usable\)", first)
        if c:
            out["card"] = {"fits": c.group(1) == "fits", "mem": _f(c.group(2)), "usable": _f(c.group(3))}
        plans = re.finditer(r"([\d,]+\.\d) of ([\d.]+) GiB a card(?: with the changes below| over .*?)?"
                            r"(?: \((weights [^()]*)\))?: (fits|does not fit)\.", first)
    else:
        m = re.match(r"显存：按所述配置整个任务放在一张卡上约需 ([\d,]+\.\d) GiB（([^）]*)）", first)
        assert m, first
        out["total"], out["terms"], out["names"] = _f(m.group(1)), _terms(m.group(2)), m.group(2)
        c = re.search(r"：(一张|超过一张) .*?（([\d.]+) GiB，可用 ([\d.]+) GiB）", first)
        if c:
            out["card"] = {"fits": c.group(1) == "一张", "mem": _f(c.group(2)), "usable": _f(c.group(3))}
        plans = re.finditer(r"每卡 ([\d,]+\.\d) / ([\d.]+) GiB(?:（(权重[^）]*)）)?，(放得下|放不下)。", first)
    out["plans"] = [{"need": _f(p.group(1)), "mem": _f(p.group(2)), "terms": _terms(p.group(3)) if p.group(3) else None,
                     "fits": p.group(4) in ("fits", "放得下")} for p in plans]
    return out


def _memory_line(text: str, lang: str) -> str:
    lines = text.split("\n")
    mark = "Memory:" if lang == "en" else "显存："
    return next((ln for ln in lines if ln.startswith(mark)), lines[0])


def check_memory_answer(core, text: str, lang: str, serving: bool, method: str | None) -> dict:
    r = core.turn(text, {})[0]
    # first, or right after the yes/no on the card asked about ('is 24GB enough?': 'Yours: ... does not fit')
    first = _memory_line(r.text, lang)
    assert r.lang == lang
    assert first.startswith("Memory:" if lang == "en" else "显存："), (text, r.text[:300])
    got = parse(first, lang)
    # every term named with its number, and the terms add up to the total said (0.05 GiB of rounding a term)
    names = TERMS[lang]
    assert names[0] in got["names"] and names[5] in got["names"], first
    if serving:
        assert names[4] in got["names"], first
    elif method == "full":
        assert names[1] in got["names"] and names[2] in got["names"], first
    assert abs(sum(got["terms"]) - got["total"]) <= 0.05 * len(got["terms"]) + 0.1, (first, got)
    # the total against the card's memory, and the verdict agrees with the numbers
    assert "card" in got, first
    c = got["card"]
    assert c["usable"] <= c["mem"]
    assert c["fits"] == (got["total"] <= c["usable"] + 0.05), (first, c)
    # each plan said (the card asked about, the rental below): its GiB a card against its card, term by term
    assert got["plans"], first
    assert sum(1 for p in got["plans"] if p["fits"]) <= 1 or len(got["plans"]) == 1, first
    for p in got["plans"]:
        assert p["fits"] == (p["need"] <= p["mem"] * 0.95 + 0.1), (first, p)
        assert p["terms"], first
        assert abs(sum(p["terms"]) - p["need"]) <= 0.05 * len(p["terms"]) + 0.1, (first, p)
    assert len(re.findall(r"[\d,]+\.\d of [\d.]+ GiB a card|每卡 [\d,]+\.\d / [\d.]+ GiB", first)) == len(got["plans"]), first
    assert not memory_problems(r.verdict or {}), r.verdict
    return got


ASK_EN = ["how much vram do I need to {job}?", "is 24GB of VRAM enough to {job}?", "{job}: will it fit in memory?",
          "{job} - do I have enough gpu memory on {g}?", "how much gpu memory to {job} on {g}?"]
ASK_ZH = ["{job}要多少显存？", "{job}，显存够不够？", "在 {g} 上{job}，显存够吗", "{job}会不会爆显存？", "{job}需要多大显存"]
JOBS_EN = {"full": "full finetune {m} with adamw", "lora": "lora finetune {m}", "qlora": "qlora {m}",
           "serve": "serve {m} for 20 users"}
JOBS_ZH = {"full": "全参微调 {m}", "lora": "LoRA 微调 {m}", "qlora": "QLoRA 微调 {m}", "serve": "部署 {m} 推理服务，并发 20，"}
MODELS = ["qwen2.5-7b", "llama 3 8b", "qwen2.5-14b", "mistral 7b", "llama 3 70b", "qwen2.5-32b"]
GPUS = ["4090", "A100", "H100", "L40S", "910B", "A10"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(job=st.sampled_from(["full", "lora", "qlora", "serve"]), ask=st.integers(0, 4), m=st.sampled_from(MODELS),
       g=st.sampled_from(GPUS), lang=st.sampled_from(["en", "zh"]))
def test_a_memory_answer_names_every_term_and_its_total_against_the_card(core, job, ask, m, g, lang):
    jobs, asks = (JOBS_EN, ASK_EN) if lang == "en" else (JOBS_ZH, ASK_ZH)
    text = asks[ask].format(job=jobs[job].format(m=m), g=g)
    check_memory_answer(core, text, lang, job == "serve", job if job != "serve" else None)


TABLE = [
    ("how much VRAM do I need to fine-tune llama 3 8b with LoRA?", "en", False, "lora"),
    ("how much vram to serve llama 3 70b?", "en", True, None),
    ("how much gpu memory to full finetune qwen2.5-7b with adamw?", "en", False, "full"),
    ("will full fine-tuning llama 3 8b on 8 A100 40GB fit in memory?", "en", False, "full"),
    ("do I have enough vram on a 4090 to lora finetune qwen2.5-7b?", "en", False, "lora"),
    ("what's the memory footprint to qlora llama 3 70b?", "en", False, "qlora"),
    ("is there enough gpu memory on one L40S to serve qwen2.5-14b for 10 users?", "en", True, None),
    ("minimum vram to serve mistral 7b for 20 users", "en", True, None),
    ("全参微调 qwen2.5-7b 要多少显存？", "zh", False, "full"),
    ("显存够不够: 4090 上全量微调 qwen2.5-7b", "zh", False, "full"),
    ("4090 上 LoRA 微调 qwen2.5-7b 显存够不够", "zh", False, "lora"),
    ("部署 llama 3 70b 推理服务，并发 20，需要多大显存", "zh", True, None),
    ("QLoRA 微调 qwen2.5-32b 最低显存多少", "zh", False, "qlora"),
    ("在 A100 上全参微调 llama 3 8b，显存够吗", "zh", False, "full"),
    ("910B 上 LoRA 微调 qwen2.5-14b 会不会爆显存？", "zh", False, "lora"),
    ("用 L40S 部署 qwen2.5-7b，并发 50，显存占用多少", "zh", True, None),
]


@pytest.mark.parametrize("text, lang, serving, method", TABLE)
def test_memory_phrasings(core, text, lang, serving, method):
    check_memory_answer(core, text, lang, serving, method)


def test_memory_problems_finds_terms_that_do_not_add_up_and_a_wrong_fits():
    ok = {"kind": "memory", "one_copy_gib": 26.6,
          "breakdown": {"weights": 15.11, "gradients": 0.16, "optimizer": 0.31, "activations": 6.87, "overhead": 4.15},
          "card": {"memory_gib": 24.0, "usable_gib": 22.8, "fits": False},
          "plans": [{"per_gpu_gib": 22.1, "memory_gib": 24.0, "usable_gib": 22.8, "fits": True, "cards": 1,
                     "side": "pick", "breakdown": {"weights": 15.11, "activations": 3.44, "overhead": 3.12,
                                                   "optimizer": 0.31, "gradients": 0.16}}]}
    assert not memory_problems(ok)
    assert memory_problems({**ok, "one_copy_gib": 30.0})
    assert memory_problems({**ok, "card": {**ok["card"], "fits": True}})
    assert memory_problems({**ok, "plans": [{**ok["plans"][0], "per_gpu_gib": 23.5}]})     # sum and fits both off


WHY_OOM = [
    ("full fine-tune llama 3 8b on 1 A100 40GB || why does it OOM?", "en", "A100 40GB"),
    ("全参微调 llama 3 8b，1 张 A100 40GB || 为什么会爆显存", "zh", "A100 40GB"),
    ("we have 8 x 4090, serve llama 3 70b for 20 users || why OOM?", "en", "4090"),
    ("我们有 2 张 L40S，LoRA 微调 qwen2.5-14b || 为什么 OOM 了", "zh", "L40S"),
    ("we have 4 x A10, full fine-tune qwen2.5-7b || why am I getting out of memory?", "en", "A10"),
]


@pytest.mark.parametrize("conv, lang, card", WHY_OOM)
def test_why_oom_after_an_answer_on_their_cards_is_about_their_cards(core, conv, lang, card):
    """'why does it OOM?' after 'Yours: 1 x A100 40GB': term by term on their cards (the terms sum to the total
    said), never on a rental the answer did not show (before: 'On the plan (4 x H100 PCIe 80GB) it should not')."""
    state = None
    for t in conv.split(" || "):
        reply, state = core.turn(t, state)
    first = reply.text.split("\n")[0]
    if (reply.verdict or {}).get("kind") != "why_oom":
        pytest.skip(f"not answered as a why-OOM: {first[:80]}")
    assert card in first, first
    m = re.search(r"([\d,]+\.\d) GiB(?: a card)? = ([^;；(（]*)", first) or re.search(r"需要 ([\d,]+\.\d) GiB = ([^;；(（]*)", first)
    assert m, first
    terms = _terms(m.group(2))
    assert terms and abs(sum(terms) - _f(m.group(1))) <= 0.05 * len(terms) + 0.1, first
