"""A follow-up that relaxes (or tightens) a service's latency targets re-plans the same service with the new targets
(set5 s5-22 T3: 'cheaper option? we could live with 15 tok/s and 3s TTFT' got 'what is the job?' and read 15 tok/s as
a new load of 15 tokens a second; '首字延迟放宽到 5 秒呢' was not read at all). A bare token rate after a service sized in
requests or users is each stream's speed; the number may come before its target ('3s TTFT'). Relaxing a target never
needs more cards than the plan before."""
from __future__ import annotations

import pytest

FIRST = {
    "en": "serve {model} at {q} requests/s, 1000 input 250 output tokens, TTFT under 1s, 30 tokens/s per user, on GCP",
    "zh": "在 GCP 上部署 {model}，QPS {q}，输入1000输出250 token，首字延迟 1 秒以内，每个用户 30 token/s",
}
# follow-up -> (ttft_ms, tpot_ms) it says (None: not said)
FOLLOW = [
    ("cheaper option? we could live with 15 tok/s and 3s TTFT", 3000, 66.67),
    ("TTFT relaxed to 3s", 3000, None),
    ("what if TTFT can be 2 s?", 2000, None),
    ("we could live with 20 tokens/s", None, 50.0),
    ("15 tokens/s per user is enough", None, 66.67),
    ("首字延迟放宽到 5 秒呢", 5000, None),
    ("首token放宽到3秒，每个用户 15 token/s 就够", 3000, 66.67),
    ("3 秒首字也可以", 3000, None),
]
MARK = {"en": "Re-planned the same job", "zh": "重新规划同一任务"}
HELP = ("I only advise on", "我只回答", "What is the job", "是什么任务")


def _cards(r) -> int:
    from bot.conversation.fleet_delta import plan_cards
    return plan_cards(next(x for x in r.recommendations if x.get("label") != "yours"))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("model, q", [("Llama-3.1-8B", 50), ("Qwen2.5-14B", 20), ("Qwen2.5-32B", 10)])
@pytest.mark.parametrize("follow, ttft, tpot", FOLLOW, ids=[f[0][:24] for f in FOLLOW])
def test_a_relaxed_target_is_re_planned(core, lang, model, q, follow, ttft, tpot):
    r1, state = core.turn(FIRST[lang].format(model=model, q=q), {})
    assert r1.status == "answer", r1.text[:200]
    r2, _ = core.turn(follow, state)
    assert not any(h in r2.text for h in HELP), (follow, r2.text[:300])
    assert r2.status == "answer" and r2.intent == "inference", (follow, r2.text[:300])
    assert r2.slots.get("qps") == r1.slots.get("qps") and not r2.slots.get("token_rate"), (r1.slots, r2.slots)
    said = {c["slot"] for c in r2.changed}
    if ttft is not None:
        assert r2.slots["ttft_ms"] == ttft and "ttft_ms" in said, (follow, r2.slots, said)
    if tpot is not None:
        assert r2.slots["tpot_ms"] == pytest.approx(tpot, abs=0.01) and "tpot_ms" in said, (follow, r2.slots, said)
    assert MARK[r2.lang] in r2.text.splitlines()[0] or MARK[r2.lang] in r2.text.splitlines()[1], r2.text[:300]
    assert _cards(r2) <= _cards(r1) or next(x for x in r2.recommendations if x.get("label") != "yours")["gpu"] != \
        next(x for x in r1.recommendations if x.get("label") != "yours")["gpu"], (follow, _cards(r1), _cards(r2))
