"""'how much faster would AWQ int4 be, and why?' / '用 AWQ int4 量化版会快多少？为啥' after a serving or batch job (set5
s5-12 T2 got only the quantization primer, no speed figure): the job planned again at that precision, the speed
before and after from the two plans (GPU-hours of a batch, requests/s a card carries for a service), and why, memory-
or compute-bound by the ratio the plans give; never the primer or the 'faster?' plan ask."""
from __future__ import annotations

import pytest

FIRST = [
    "要用 Qwen2.5-7B 给 100 万条商品标题生成描述，每条输入 200 token，输出 300 token，周末两天跑完",
    "generate descriptions for 500k product titles with Llama-3.1-8B, 200 input 300 output tokens each",
    "serve Qwen2.5-14B at 10 requests/s, 1000 input 300 output tokens on AWS",
    "部署 Qwen2.5-32B，QPS 5，输入1000输出300 token",
]
FOLLOW = ["how much faster would AWQ int4 be, and why?", "用 AWQ int4 量化版会快多少？为啥", "would GPTQ 4-bit speed it up?",
          "int8 量化能提速多少"]
PRIMER = ("权重量化:", "Weight quantization:", "Faster, the same service")


@pytest.mark.parametrize("first", FIRST, ids=[f[:20] for f in FIRST])
@pytest.mark.parametrize("follow", FOLLOW)
def test_a_precision_speed_ask_gives_before_and_after(core, first, follow):
    r1, state = core.turn(first, {})
    assert r1.status == "answer", r1.text[:200]
    r2, _ = core.turn(follow, state)
    assert r2.status == "answer" and not any(p in r2.text for p in PRIMER), r2.text[:300]
    assert r2.slots.get("precision") in ("int4", "int8"), r2.slots
    q = next((x["because"] for x in r2.rule_trace if x.get("rule") == "quant_speed"), None)
    assert q and q["before"] > 0 and q["after"] > 0, [x.get("rule") for x in r2.rule_trace][-4:]
    assert q["ratio"] == pytest.approx(q["before"] / q["after"], rel=1e-2)
    assert ("memory" in q["bound"]) == (q["ratio"] >= 1.15), q
    assert any(w in r2.text for w in ("Speed,", "速度，")) and any(w in r2.text for w in ("Why", "原因", "为什么")), \
        r2.text[:600]
    assert any(c.get("id") == "awq-paper" for c in r2.citations), r2.citations
