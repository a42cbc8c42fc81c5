"""A budget keeps its currency: a CNY budget is checked in CNY against USD prices at the dated ECB rates, and the
answer shows the price in the user's currency; a price file in CNY is ranked in the same unit as USD prices."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.knowledge.loader import default_knowledge
from bot.surfaces.cli.main import main


def ask(*args: str) -> dict:
    res = CliRunner().invoke(main, ["ask", "--json", *args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


@pytest.mark.parametrize("question", ["full fine-tune qwen2.5 14b on huawei cloud, budget 100 CNY per hour",
                                      "在华为云上全参微调 qwen2.5 14b，预算每小时100元"])
def test_a_cny_budget_is_checked_in_cny(question):
    kb = default_knowledge()
    r = ask(question)
    assert (r["slots"]["budget_amount"], r["slots"]["budget_currency"]) == (100.0, "CNY")
    rows = [c for c in r["recommendations"] + r["considered"] if c["price_per_hour"] is not None]
    assert rows
    for c in rows:
        in_cny = kb.convert(c["price_per_hour"], c["currency"], "CNY")
        assert c["user_currency"] == "CNY" and c["price_per_hour_user"] == pytest.approx(in_cny, abs=0.01)
        assert c["over_budget"] == (in_cny > 100.0), c["flavor"]
        assert c["user_rate_date"] == "2026-05-08"


def test_the_answer_shows_the_users_currency():
    res = CliRunner().invoke(main, ["ask", "full fine-tune qwen2.5 14b on huawei cloud, budget 100 CNY per hour"])
    first = res.output.splitlines()[0]
    assert "USD/h" in first and "CNY (ECB rate of 2026-05-08)" in first


def test_a_cny_price_file_is_ranked_in_the_same_unit(tmp_path):
    """5 CNY/h is about 0.7 USD/h: cheaper than the 0.80 USD/h one-L4 size, so it wins (compared as 5 > 0.80 it
    would have lost)."""
    prices = tmp_path / "prices.yaml"
    prices.write_text("prices:\n  - {flavor: huaweicloud/p3.2xlarge.8, on_demand: 5.0, currency: CNY, "
                      "date: 2026-12-01}\n", encoding="utf-8")
    # a fresh process: the service keeps its knowledge base for the life of one
    out = subprocess.run([sys.executable, "-m", "bot", "ask", "--json", "lora fine-tune qwen2.5 7b on huawei cloud"],
                         env={**os.environ, "ADVISOR_PRICES_FILE": str(prices)}, capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parent.parent)
    r = json.loads(out.stdout)
    top = r["recommendations"][0]
    assert (top["flavor"], top["currency"], top["price_kind"]) == ("p3.2xlarge.8", "CNY", "local")
