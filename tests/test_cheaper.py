"""'cheaper?' after an answer (bot/plan/cheaper.py): each concession's price, from the planner's own pick for the
changed job, kept only when it meets the job and saves at least 5 % in the same units and currency."""
from __future__ import annotations

import pytest

from bot.plan.cheaper import MIN_SAVING, cheaper_options, concessions


def rec(provider="huaweicloud", flavor="big", hourly=10.0, job_cost=None, currency="USD", fits=True, breaks=(),
        costs=(), label="pick"):
    return {"provider": provider, "flavor": flavor, "hourly_total": hourly, "job_cost": job_cost, "currency": currency,
            "fits": fits, "ruled_out": None, "breaks": list(breaks), "costs": list(costs), "label": label,
            "instances": 1, "gpus_total": 4, "gpu_name": "H100"}


def planner(table):
    """A stand-in for the planner: the ranked plans for each changed slot (by the one slot the concession sets)."""
    def advise(slots):
        for key in ("precision", "method", "provider"):
            if (key, slots.get(key)) in table:
                return table[(key, slots[key])]
        return [rec()]
    return advise


@pytest.mark.parametrize("table, want", [
    # FP8 halves a service's hourly cost; INT4 saves more: both kept, cheapest first
    ({("precision", "fp8"): [rec(hourly=5.0)], ("precision", "int4"): [rec(hourly=4.0)]}, [("precision.int4", 60)]),
    # a saving under 5 %: not worth the concession
    ({("precision", "fp8"): [rec(hourly=9.6)]}, []),
    # cheaper but misses a target (latency): not offered
    ({("precision", "fp8"): [rec(hourly=5.0, breaks=["tpot"])]}, []),
    # another currency cannot be compared: not offered
    ({("provider", "aliyun"): [rec(provider="aliyun", hourly=5.0, currency="CNY")]}, []),
    # the cheapest of the other clouds only, beside the precision option
    ({("provider", "aws"): [rec(provider="aws", hourly=8.0)], ("provider", "lambda"): [rec(provider="lambda", hourly=6.0)],
      ("precision", "fp8"): [rec(hourly=7.0)]}, [("provider", 40), ("precision.fp8", 30)]),
])
def test_serving_concessions(table, want):
    got = cheaper_options(planner(table), "inference", {}, rec(), None, ["huaweicloud", "aws", "lambda", "aliyun"])
    assert [(o.change, round(100 * o.saving)) for o in got][:len(want)] == want
    assert all(o.saving >= MIN_SAVING for o in got)


def test_a_job_with_a_length_compares_job_costs_and_offers_spot():
    base = rec(hourly=3.0, job_cost=30.0, costs=[{"mode": "spot", "per": "job", "cost": 12.0, "currency": "USD"}])
    table = {("method", "qlora"): [rec(hourly=1.0, job_cost=20.0)]}
    got = cheaper_options(planner(table), "finetune", {"provider": "huaweicloud"}, base, "lora", ["huaweicloud"])
    assert [(o.change, o.per, round(o.cost)) for o in got] == [("spot", "job", 12), ("method.qlora", "job", 20)]


def test_a_service_is_never_offered_spot():
    base = rec(costs=[{"mode": "spot", "per": "job", "cost": 1.0, "currency": "USD"}])
    assert cheaper_options(planner({}), "inference", {"provider": "x"}, base, None, ["x"]) == []


@pytest.mark.parametrize("intent, slots, method, want", [
    ("inference", {}, None, ["precision.fp8", "precision.int4", "provider"]),
    ("inference", {"precision": "fp8", "provider": "aws"}, None, []),        # both said: nothing of theirs gives
    ("finetune", {"provider": "aws"}, "lora", ["method.qlora"]),
    ("finetune", {"provider": "aws"}, "full", ["method.lora"]),
    ("train", {"provider": "aws"}, "full", []),                             # pre-training stays full
])
def test_what_may_give(intent, slots, method, want):
    got = concessions(intent, slots, method, ["huaweicloud", "aws"], "huaweicloud")
    assert [c for c, _ in got] == want
