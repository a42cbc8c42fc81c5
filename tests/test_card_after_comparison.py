"""A card named after a comparison of two others ('what if we AWQ int4 it and use NVadsA10 v5 instead?' after 'NC A100 v4
or NC H100 v5?'; set5 s5-36 T2 repeated the A100-vs-H100 comparison) is the job planned on that card, with what the
turn changes (precision), and its fleet said against each side compared before. An Azure series name ('NVadsA10 v5',
'NC A100 v4') names its card."""
from __future__ import annotations

import pytest

FIRST = ["Serving Qwen2.5-32B-Instruct as an internal copilot, peak ~40 concurrent requests, avg context 4k. Azure. "
         "NC A100 v4 or NC H100 v5?",
         "部署 Qwen2.5-32B，峰值 40 个并发请求，平均上下文 4k，Azure 上用 A100 还是 H100？"]
FOLLOW = [("what if we AWQ int4 it and use NVadsA10 v5 instead?", "a10", "int4"),
          ("use the A10 instead, in int4", "a10", "int4"), ("换成 A10 用 int4 呢", "a10", "int4"),
          ("what about NVadsA10 v5 instead?", "a10", None), ("改用 A10 呢", "a10", None)]


@pytest.mark.parametrize("first", FIRST, ids=["en", "zh"])
@pytest.mark.parametrize("follow, gpu, prec", FOLLOW, ids=[f[0][:20] for f in FOLLOW])
def test_a_card_named_after_a_comparison_is_planned_on(core, first, follow, gpu, prec):
    r1, state = core.turn(first, {})
    assert (r1.verdict or {}).get("kind") == "compare", r1.text[:200]
    r2, _ = core.turn(follow, state)
    assert r2.status == "answer", (follow, r2.status, r2.text[:300])
    rec = next(x for x in r2.recommendations if x.get("label") != "yours")
    assert rec["gpu"] == gpu, (follow, rec["gpu"])
    if prec:
        assert r2.slots.get("precision") == prec, r2.slots
    assert any(x.get("rule") == "against_compared" for x in r2.rule_trace), [x.get("rule") for x in r2.rule_trace]
    assert r2.text.count("->" if r2.lang == "en" else "→") >= 2, r2.text[:400]
