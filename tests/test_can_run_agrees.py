"""An answer that contradicts itself (second wave, class 'consist'): 'can 910B run / fine-tune Qwen2.5-72B?' said
'Yes: 8 x Huawei Ascend 910B hold it' in its verdict line over a pick of 4 x 8 = 32 of them. The can-run verdict
now reads the plan's count and GiB a card when the pick is on the card asked about, and says the fewest that hold
it (and 4-bit weights) only as the other options they are; the critic's verdict-agreement invariant
(bot/plan/critic.verdict_problems, rules/critic.yaml) checks every generated answer: any 'N cards / N 张 / N x'
in the verdict line is the pick's count, the fewest or the 4-bit option's, and the pick's count is said."""
from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.plan.critic import CARD_COUNT, verdict_problems


def _pick(reply) -> dict:
    return next((r for r in reply.recommendations if r.get("label") != "yours"), {})


def check_can_run(core, turns: list[str], lang: str) -> None:
    state = None
    for t in turns:
        reply, state = core.turn(t, state)
    assert reply.lang == lang
    v = reply.verdict or {}
    if v.get("kind") != "can_run":
        return
    line = v["line"]
    first = reply.text.split("\n")[0]
    assert first.startswith(line.rstrip("。.")[:20]), (turns, first, line)       # the verdict leads the answer
    pick = _pick(reply)
    said = [int(m.group(1)) for m in CARD_COUNT.finditer(line)]
    allowed = {v.get("cards"), (v.get("int4") or {}).get("cards"), v.get("pick_cards")}
    assert set(said) <= allowed, (turns, line, said, allowed)
    if v["answer"] in ("yes", "port") and pick.get("fits") and not pick.get("mixed") \
            and pick.get("gpu") in set(v.get("family") or [v["gpu"]]):
        n = pick["gpus_total"]
        # the plan's own count is the one the line says (the fewest only beside it, as the other option)
        assert n == v["cards"] or v.get("pick_cards") == n, (turns, line, n)
        if n != v["cards"]:
            assert re.search(rf"(?<!\d){n}\s*(?:x\s|张)", line), (turns, line, n)
            assert f"{pick['per_gpu_gib']:,.1f}" in line, (turns, line, pick["per_gpu_gib"])
    assert not verdict_problems(reply.model_dump(include={"status", "verdict", "recommendations", "rule_trace"}),
                                0.05)


ASK = {
    "en": {"serve": ["can {g} run {m}?", "can an {g} serve {m}?", "is {g} able to serve {m} for 20 users?"],
           "lora": ["can {g} fine-tune {m} with LoRA?", "can I LoRA fine-tune {m} on {g}?"],
           "full": ["can {g} full fine-tune {m}?", "could {g} cards do a full fine-tune of {m}?"],
           "qlora": ["can {g} QLoRA {m}?"]},
    "zh": {"serve": ["{g} 能跑 {m} 推理吗", "{g} 能部署 {m} 吗？", "{g} 可以跑 {m} 推理服务吗，20 个并发"],
           "lora": ["{g} 能跑 {m} LoRA 微调吗", "{g} 能不能 LoRA 微调 {m}"],
           "full": ["{g} 能全参微调 {m} 吗", "{g} 能跑 {m} 全量微调吗"],
           "qlora": ["{g} 能 QLoRA 微调 {m} 吗"]},
}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(lang=st.sampled_from(["en", "zh"]), job=st.sampled_from(["serve", "lora", "full", "qlora"]),
       i=st.integers(0, 2), g=st.sampled_from(["910B", "昇腾 910B", "A100", "H100", "L40S", "RTX 4090", "H20", "A10"]),
       m=st.sampled_from(["qwen2.5-72b", "llama 3 70b", "qwen2.5-32b", "qwen2.5-7b", "llama 3 8b", "qwen2.5-14b"]))
def test_a_can_run_verdict_says_the_plans_count(core, lang, job, i, g, m):
    asks = ASK[lang][job]
    g = g.replace("昇腾", "Ascend") if lang == "en" else g
    check_can_run(core, [asks[i % len(asks)].format(g=g, m=m)], lang)


TABLE = [
    (["can 910B run qwen2.5-72b?"], "en"),
    (["can 910B fine-tune qwen2.5-72b?", "full"], "en"),
    (["can 910B fine-tune qwen2.5-72b?", "LoRA"], "en"),
    (["can an A100 serve llama 3 70b?"], "en"),
    (["can Ascend 910B serve llama 3 70b for 50 users?"], "en"),
    (["can H100 full fine-tune llama 3 70b?"], "en"),
    (["can a 4090 run qwen2.5-32b?"], "en"),
    (["is an L40S able to serve qwen2.5-72b?"], "en"),
    (["昇腾 910B 能跑 Qwen2.5-72B 微调吗", "全量"], "zh"),
    (["昇腾 910B 能跑 Qwen2.5-72B 微调吗", "LoRA"], "zh"),
    (["昇腾 910B 能跑 Qwen2.5-72B 推理吗"], "zh"),
    (["910B 能全参微调 Qwen2.5-32B 吗"], "zh"),
    (["H20 能部署 Qwen2.5-72B 吗？"], "zh"),
    (["A100 能跑 llama 3 70b 推理吗"], "zh"),
    (["4090 能跑 qwen2.5-14b LoRA 微调吗"], "zh"),
    (["H100 能不能全量微调 qwen2.5-72b"], "zh"),
]


@pytest.mark.parametrize("turns, lang", TABLE)
def test_can_run_phrasings(core, turns, lang):
    check_can_run(core, turns, lang)


def test_the_910b_full_fine_tune_says_32_cards_first(core):
    """The reported answer: 'Yes: 8 x Huawei Ascend 910B' over a pick of 4 x 8 cards."""
    for turns, word in [(["can 910B fine-tune qwen2.5-72b?", "full"], "32 x"),
                        (["昇腾 910B 能跑 Qwen2.5-72B 微调吗", "全量"], "32 张")]:
        state = None
        for t in turns:
            reply, state = core.turn(t, state)
        assert _pick(reply)["gpus_total"] == 32, _pick(reply)
        assert word in reply.text.split("\n")[0], reply.text[:300]


def _reply(v: dict, n: int, gpu: str = "ascend-910b") -> dict:
    return {"status": "answer", "verdict": v, "rule_trace": [],
            "recommendations": [{"label": "pick", "gpu": gpu, "gpus_total": n, "per_gpu_gib": 52.77, "fits": True}]}


def test_the_critic_finds_a_count_the_pick_contradicts():
    v = {"kind": "can_run", "answer": "yes", "gpu": "ascend-910b", "family": ["ascend-910b"], "cards": 8,
         "need_gib": 47.5, "int4": None, "line": "Yes: 8 x Huawei Ascend 910B (64 GiB each) hold it at 47.5 GiB a card."}
    assert verdict_problems(_reply(v, 32), 0.05)
    assert not verdict_problems(_reply(v, 8), 0.05)
    assert not verdict_problems(_reply(v, 32, "h100-sxm"), 0.05)        # the pick on other cards: another option
    ok = {**v, "pick_cards": 32, "pick_need_gib": 52.8,
          "line": "Yes: the pick below runs it on 32 x Huawei Ascend 910B (64 GiB each) at 52.8 GiB a card; "
                  "the fewest that hold it: 8 (47.5 GiB a card)."}
    assert not verdict_problems(_reply(ok, 32), 0.05)
    assert verdict_problems(_reply({**ok, "pick_need_gib": 40.0}, 32), 0.05)
    assert verdict_problems(_reply({**ok, "line": ok["line"].replace("32 x", "16 x")}, 32), 0.05)
