"""One answer, every surface (issue 33.1): the Slack blocks are built from the answer's view, the same object the
text and the JSON carry, so each surface says the same plans with the same figures.

Over every planner scenario question: the Slack header names the pick with its counts (instances x flavor, the
GPUs in all), each "Also considered" row of the details names its own flavor, its own price and its own verdict as
the JSON's plan rows say (a row built beside another plan's figures fails here), and every block of the answer and
of its details is one slack_sdk's typed models accept.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bot.render.view import considered_rows
from bot.surfaces.slack.blocks import blocks, details_blocks
from bot.surfaces.slack.format import escape
from slack_stub import validate_blocks

SCENARIOS = yaml.safe_load((Path(__file__).parent / "scenarios" / "planner.yaml").read_text(encoding="utf-8"))[
    "scenarios"]
PRICE = re.compile(r"(\d[\d,]*\.\d\d) ([A-Z]{3})/h")


@pytest.fixture(scope="module")
def answers(core):
    """Each scenario question's `ask --json` object, its Slack blocks and (for an answer) the blocks its Details
    button brings, computed once for the module."""
    out = {}
    for s in SCENARIOS:
        reply, _ = core.turn(s["q"], {})
        r = reply.model_dump()
        more = [b.to_dict() for b in details_blocks(reply.view, core.templates, r["lang"])] if reply.view else []
        out[s["id"]] = (r, blocks(r, core.templates), more)
    return out


def _lost_plans(r: dict) -> list[dict]:
    """The JSON's plans that lost, in the order an answer lists them: the other rentals (not the named cheapest or
    fastest), then `considered`."""
    rent = [x for x in r["recommendations"] if x.get("label") != "yours"]
    return [x for x in rent[1:] if x.get("label") not in ("cheapest", "fastest")] + r["considered"]


def _considered_rows(slack: list[dict], title: str) -> list[str]:
    for b in slack:
        text = (b.get("text") or {}).get("text", "")
        if b["type"] == "section" and text.startswith(f"*{title}*\n"):
            return text.split("\n")[1:]
    return []


@pytest.mark.parametrize("s", SCENARIOS, ids=[s["id"] for s in SCENARIOS])
def test_considered_rows_carry_their_own_plan(core, answers, s):
    r, _, details = answers[s["id"]]
    if r["status"] != "answer":
        return
    plans = _lost_plans(r)
    rows = _considered_rows(details, core.templates.say("label.considered", r["lang"]))
    assert len(rows) == min(len(plans), 6) == len(r["view"]["considered"]), (rows, [p["flavor"] for p in plans])
    for row, plan, shown in zip(rows, plans, r["view"]["considered"]):
        assert f"`{escape(plan['flavor'])}` {plan['gpu_count']}x {escape(plan['gpu_name'])} ·" in row, (row, plan)
        assert shown["flavor"] == plan["flavor"] and shown["price_per_hour"] == plan["price_per_hour"]
        assert row.endswith(escape(shown["verdict"])), (row, shown["verdict"])
        prices = {float(p.replace(",", "")) for p, _ in PRICE.findall(row)}
        # a price a row says is its own plan's, never a neighbour's
        assert prices <= ({round(plan["price_per_hour"], 2)} if plan["price_per_hour"] is not None else set()), \
            (row, plan["price_per_hour"])
        if plan.get("ruled_out") == "no_fit":
            assert not prices and f"{plan['gpu_memory_gib']:g}" in row, row


@pytest.mark.parametrize("s", SCENARIOS, ids=[s["id"] for s in SCENARIOS])
def test_header_names_the_pick_with_its_counts(answers, s):
    r, slack, _ = answers[s["id"]]
    if r["status"] != "answer":
        return
    assert slack[0]["type"] == "header"
    header = slack[0]["text"]["text"]
    recs = r["recommendations"]
    if recs[0]["label"] == "yours":
        assert f"{recs[0]['gpu_count']}x {recs[0]['gpu_name']}" in header
        return
    top = recs[0]
    if top.get("mixed"):
        for part in top["fleet"]:
            assert f"{part['replicas']} x {part['flavor']}" in header, header
        return
    copies = top["instances"] * max(1, top.get("replicas") or 1)
    assert f"{copies} x {top['flavor']}" in header, header
    assert f"{copies * top['gpu_count']} x {top['gpu_name']}" in header, header


@pytest.mark.parametrize("s", SCENARIOS, ids=[s["id"] for s in SCENARIOS])
def test_every_block_is_one_slack_accepts(answers, s):
    _, slack, details = answers[s["id"]]
    assert validate_blocks(slack) is None and validate_blocks(details) is None


def test_the_view_is_the_rows_the_json_has(core):
    """The view's considered rows are built from the plan rows alone: the same function over the JSON gives them."""
    reply, _ = core.turn("serve llama 3 70b for 500 users", {})
    r = reply.model_dump()
    assert [x.model_dump() for x in considered_rows(r, core.templates)] == r["view"]["considered"]
    assert len(r["view"]["considered"]) >= 3
