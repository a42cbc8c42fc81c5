"""Loads and latency targets as people write them: request rates per minute, hour or day; time to first token,
time per token, a whole response; and what the planner makes of them.

Expectations from arithmetic, written before running:
- '1000 requests per minute' = 16.7 requests/s; '每分钟 600 个请求' = 10/s; '300 rpm' = 5/s; '2万 requests a day' = 0.23/s.
- 'serve llama 3.1 8b, 1000 requests per minute, p95 latency under 2s': 16.7 req/s x 256 output tokens = 4,270
  output tokens/s. One H100-class card serves an 8B model at roughly 2,500-3,500 tokens/s at a 100 ms token
  budget; an L4 at a few hundred: 2-3 H100s or about 10-15 L4s, under 15 USD/h either way; far more than one L4.
- A whole response in 2 s for 256 tokens leaves about 6 ms a token after a 500 ms first token.
"""
from __future__ import annotations

import pytest

from bot.plan.plans import Targets, e2e_split


@pytest.fixture(scope="module")
def core():
    from bot.conversation.turn import Core
    return Core.load()


@pytest.mark.parametrize("text, slot, value", [
    ("serve llama 3.1 8b, 1000 requests per minute, p95 latency under 2s", "qps", 16.667),
    ("峰值每分钟 600 个请求，部署 qwen2.5 7b", "qps", 10.0),
    ("llama 3 8b api at 300 rpm", "qps", 5.0),
    ("serve qwen2.5 7b, 2万 requests a day", "qps", 20_000 / 86_400),    # 0.2315/s on average
    ("每小时 3.6 万次调用，部署 qwen2.5 7b", "qps", 10.0),
    ("serve llama 3 8b with TTFT under 500 ms for 30 users", "ttft_ms", 500.0),
    ("部署 qwen2.5 7b，首 token 延迟 1 秒内，每个 token 50ms 以内，100 并发", "ttft_ms", 1000.0),
    ("部署 qwen2.5 7b，首 token 延迟 1 秒内，每个 token 50ms 以内，100 并发", "tpot_ms", 50.0),
    ("serve qwen2.5 7b, 30 ms per token", "tpot_ms", 30.0),
    ("serve llama 3.1 8b, 10 qps, end-to-end latency under 5 s", "e2e_ms", 5000.0),
    ("整个响应 3 秒以内，部署 Qwen2.5-14B", "e2e_ms", 3000.0),
    ("serve llama 3.1 8b, 1000 requests per minute, p95 latency under 2s", "latency_ms", 2000.0),
    ("响应时间 1 秒以内，部署 Qwen2.5-14B", "latency_ms", 1000.0),
])
def test_loads_and_targets_are_read(core, text, slot, value):
    got = core.parser.parse(text).slots.filled()
    assert got.get(slot) == pytest.approx(value, rel=1e-3), got


def test_a_duration_is_not_a_rate(core):
    got = core.parser.parse("train llama 3 8b for 3 days").slots.filled()
    assert "qps" not in got and "e2e_ms" not in got


def test_targets_from_numbers():
    t = Targets.from_slots({"ttft_ms": 500.0, "tpot_ms": 30.0}, 4096)
    assert (t.ttft_ms, t.tpot_ms, t.latency_stated) == (500.0, 30.0, True)
    ttft, tpot = e2e_split(2000.0, 256, 450.0)
    assert ttft == 450.0 and tpot == pytest.approx((2000 - 450) / 256)
    t = Targets.from_slots({"latency_ms": 2000.0}, 4096)      # a bare latency is the first token's
    assert t.ttft_ms == 2000.0 and t.tpot_ms == 100.0


def test_a_request_rate_sizes_the_fleet(core):
    # in bf16: unstated, FP8 weights and KV serve this rate on one H100 (issue 31 item 5)
    r = core.turn("serve llama 3.1 8b in bf16, 1000 requests per minute, p95 latency under 2s", {})[0].model_dump()
    pick = r["recommendations"][0]
    gpus = pick["gpus_total"] * max(1, pick.get("replicas") or 1)
    assert gpus >= 2, r["text"]                                  # not one card for 4 users
    assert pick["price_per_hour"] is None or pick["price_per_hour"] * max(1, pick.get("replicas") or 1) < 15
    assert "16.7 requests/s" in r["text"] + r["details"] and "small team" not in r["text"] + r["details"]
    assert "first token" in r["text"] + r["details"]                            # how the bare latency was read, said


@pytest.mark.parametrize("question, met, words", [
    # LoRA 14B on 200M tokens: ~15 H100-hours at ~3.3 USD = ~50 USD, well inside 300
    ("LoRA fine-tune qwen2.5 14b on 200M tokens within 2 days, budget 300 USD", True, "Within your budget"),
    # a 32B model for 50 users on one 141 GB card costs ~2,500 USD a month = ~17k CNY, inside 20k CNY a month
    ("预算每月 2 万元，部署 qwen2.5 32b 给 50 人用", True, "在预算内"),
    # 7B on 1T tokens is ~40k H100-hours, over 100k USD: a 50k budget is broken and the answer says by how much
    ("pretrain a 7B model on 1T tokens, budget 50k dollars", False, "Over your budget"),
])
def test_the_answer_says_what_the_pick_spends_of_the_budget(core, question, met, words):
    r = core.turn(question, {})[0].model_dump()
    b = r["recommendations"][0]["budget"]
    assert b and b["met"] is met and b["currency"] == ("CNY" if "元" in question else "USD"), b
    assert words in r["text"] + r["details"], r["text"]
