"""Queued work with a per-order deadline ('上线后高峰一天 200 单，要求下单后 1 小时内出 LoRA，要常驻多少卡？',
'300 orders a day, each ready within 2 hours of ordering; how many resident GPUs?') is sized as a queue (set5 s5-17:
1 resident card for 200 x 0.59 GPU-h a day). Properties over generated jobs x order rates x deadlines, zh and en:

- the resident fleet carries at least the day's work over the busy window (replicas >= orders x hours / 12), and
  never fewer cards than the day's card-hours / 24;
- one order alone must fit its deadline; when it does not, no fleet is offered and a faster card / more cards per
  order is said;
- the fleet grows with the order rate, and at the peak rate at most 5% of orders are late (Erlang C);
- the verdict leads the reply and states its numbers and the queue assumption."""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.conversation.queue_turn import due_hours, orders_per_day
from bot.plan.queue import erlang_c, size_queue

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 20000), t=st.floats(0.02, 5), d=st.floats(0.1, 8), g=st.integers(1, 8))
def test_the_queue_carries_the_days_work_and_meets_the_deadline(n, t, d, g):
    q = size_queue(n, t, d, g)
    if t > d:
        assert q["replicas"] is None and q["cards_per_order_needed"] > g
        return
    assert q["replicas"] >= math.ceil(n * t / 12)
    assert q["cards"] >= n * t * g / 24
    assert q["late_share"] <= 0.05 + 1e-9
    assert size_queue(n * 2, t, d, g)["replicas"] >= q["replicas"]


def test_erlang_c_matches_known_values():
    # M/M/1: P(wait) = rho; M/M/2 at a = 1: 1/3
    assert erlang_c(1, 0.5) == pytest.approx(0.5)
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3)


RATES = {"zh": ["上线后高峰一天 {n} 单，要求下单后 {d} 小时内出结果，要常驻多少卡？", "每天 {n} 个订单，每单 {d} 小时内交付，需要几张卡常驻？",
                "日均 {n} 单，下单后 {d} 小时之内要训完，要多少张卡"],
         "en": ["at peak {n} orders per day, each ready within {d} hours of ordering; how many resident GPUs?",
                "{n} jobs a day, each must be done within {d} hours. how many GPUs to keep running?",
                "we expect {n} orders/day and every order has to finish in {d} hours; how many cards?"]}
JOBS = {"zh": ["给客户训 Flux.1-dev 的 LoRA，每个 20 张图，1500 步，1024 分辨率", "给每个客户训 SDXL LoRA，20 张图，1500 步",
               "LoRA 微调 llama 3.1 8b，每个客户 2000 条数据"],
        "en": ["LoRA fine-tune Flux.1-dev per customer, 20 images, 1500 steps at 1024px",
               "LoRA fine-tune SDXL per customer, 20 images, 1500 steps",
               "LoRA fine-tune llama 3.1 8b per customer on 2000 samples"]}


@pytest.mark.xfail(strict=True, reason="known on main: after the merge with the follow-up and work-quantity changes, "
                   "'上线后高峰一天 20 单，要求下单后 1 小时内出结果' after a Flux LoRA job re-plans it as a served model with "
                   "a 1-hour deadline instead of the queue (the queue sizing itself holds: the tests above); strict, so "
                   "the fix takes this mark off")
@settings(max_examples=25, **SETTINGS)
@given(lang=st.sampled_from(["zh", "en"]), j=st.integers(0, 2), f=st.integers(0, 2),
       n=st.sampled_from([20, 50, 200, 500, 2000]), d=st.sampled_from([1, 2, 4]))
def test_orders_a_day_with_a_deadline_get_a_queue_verdict_first(core, lang, j, f, n, d):
    state: dict = {}
    first, state = core.turn(JOBS[lang][j], state)
    assert first.status == "answer", first.text[:300]
    ask = RATES[lang][f].format(n=n, d=d)
    assert orders_per_day(ask) == n and due_hours(ask) == d
    reply, state = core.turn(ask, state)
    v = reply.verdict or {}
    assert v.get("kind") == "queue", reply.text[:400]
    assert reply.text.split("\n")[0] == v["line"]
    if v["fits_deadline"]:
        assert v["cards"] >= v["card_hours_per_day"] / 24
        assert v["replicas"] >= math.ceil(v["work_replica_hours"] / 12)
        assert str(v["cards"]) in v["line"]
        assert "Erlang" in reply.text
    else:
        assert v["hours_per_order"] > d
