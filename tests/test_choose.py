"""Table-driven units for bot/plan/choose.py: which alternatives are named beside the pick.

Rows are built as the ranker leaves them (ranked, passing, cheapest first); only the fields `choose` reads."""
from __future__ import annotations

import pytest

from bot.plan.choose import MIN_HOURS_SAVED, choose


def _row(rid: str, hourly: float, hours: float | None, gpus: int = 1) -> dict:
    return {"id": rid, "ruled_out": None, "hourly": hourly, "hours": hours, "gpus_total": gpus, "replicas": 1,
            "job_cost": None if hours is None else round(hourly * hours, 2), "breaks": [], "over_budget": False,
            "flavor": None, "demoted": []}


@pytest.mark.parametrize("pick_hours, fast_hours, named", [
    # a 3-minute job on one T4; eight of them finish in 0.4 minutes: 2.6 minutes saved is not an option to weigh
    (0.05, 0.007, False),
    # 20 minutes vs 8 minutes: 12 minutes saved, under the quarter hour
    (20 / 60, 8 / 60, False),
    # 1.5 h vs 0.7 h (ResNet-50 on ImageNet, 4 vs 8 H100): 48 minutes saved, 47 % of the time: named
    (1.5, 0.7, True),
    # 100 h vs 95 h: 5 h saved but only 5 % of the time: not named (the 90 % share rule)
    (100.0, 95.0, False),
    # 10 h vs 8.9 h: 1.1 h and 11 %: named
    (10.0, 8.9, True),
])
def test_the_fastest_is_named_only_when_it_saves_time_that_matters(pick_hours, fast_hours, named):
    """Hourly prices chosen so the one-card plan is the cheapest job (the pick) and the eight-card plan the fastest
    (job cost = hourly x hours; the 8-card plan costs more in every row)."""
    slow = _row("one-card", 1.0, pick_hours)
    fast = _row("eight-cards", 1.0 * 8 * 1.2, fast_hours, gpus=8)
    assert fast["job_cost"] > slow["job_cost"]
    recs, _ = choose([slow, fast], lambda r: True)
    assert recs[0] is slow and recs[0]["label"] == "pick"
    labels = [r["label"] for r in recs]
    assert ("fastest" in labels) is named
    saved = pick_hours - fast_hours
    assert named == (fast_hours < pick_hours * 0.9 and saved >= MIN_HOURS_SAVED)


def test_a_plan_on_the_gpu_asked_for_is_not_simplified_away():
    """'serve qwen2.5 72b int4 on V100 32GB cards': two V100s at 6.66 USD/h are the pick; one H100 at 3.29 USD/h is
    simpler and cheaper, but not what was asked for: it stays in view as the cheapest, the pick stays on the V100s.
    Without the request, the one-card plan is the simpler, cheaper pick."""
    v100 = {**_row("v100-x2", 6.66, None, gpus=2), "named": True}
    h100 = _row("h100-x1", 3.29, None)
    recs, _ = choose([v100, h100], lambda r: True)
    assert recs[0]["id"] == "v100-x2" and [r["label"] for r in recs] == ["pick", "cheapest"]
    plain = {**v100, "named": None}
    recs, _ = choose([plain, _row("h100-x1", 3.29, None)], lambda r: True)
    assert recs[0]["id"] == "h100-x1"
