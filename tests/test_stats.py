"""`gpu-advisor audit stats`: answers, follow-ups and feedback by ISO week and intent, from the audit log and the
Slack feedback table, checked against turns made here whose counts are known."""
from __future__ import annotations

import json

from click.testing import CliRunner

from bot.store.slack_state import SlackState
from bot.store.stats import iso_week, usage_stats
from bot.surfaces.cli.main import main
from bot.surfaces.service import Service


def test_stats_count_answers_follow_ups_and_votes(tmp_path, monkeypatch):
    db = tmp_path / "advisor.db"
    monkeypatch.setenv("ADVISOR_DB", str(db))
    svc = Service(db=db)
    first = svc.ask("finetune qwen2.5 7b", surface="dm", user="U1", team="T1", channel="D1")     # asks back
    second = svc.ask("LoRA", surface="button", user="U1", team="T1", channel="D1")               # answers it
    third = svc.ask("serve llama 3 8b for 20 users", surface="dm", user="U2", team="T1", channel="D2")
    assert (first["status"], second["status"], third["status"]) == ("follow_up", "answer", "answer")
    state = SlackState(db)
    state.add_feedback(second["advice_id"], "U1", "T1", True)
    state.add_feedback(second["advice_id"], "U3", "T1", False)
    state.add_feedback(third["advice_id"], "U2", "T1", False)
    state.add_feedback(third["advice_id"], "U2", "T1", True)           # a change of mind: the last vote counts
    rows = {r.intent: r for r in usage_stats(db)}
    week = iso_week(svc.audit.get(first["advice_id"])["ts"])
    ft, inf = rows["finetune"], rows["inference"]
    assert (ft.week, ft.turns, ft.answers, ft.asked_back, ft.follow_ups, ft.helpful, ft.not_helpful) == \
        (week, 2, 1, 1, 1, 1, 1)
    assert (inf.turns, inf.answers, inf.asked_back, inf.follow_ups, inf.helpful, inf.not_helpful) == (1, 1, 0, 0, 1, 0)

    res = CliRunner().invoke(main, ["audit", "stats"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].split()[:3] == ["WEEK", "INTENT", "TURNS"]
    assert lines[-1].split() == ["all", "3", "2", "1", "1", "2", "1", "67%"]
    out = json.loads(CliRunner().invoke(main, ["audit", "stats", "--json"]).output)
    assert {r["intent"] for r in out} == {"finetune", "inference"}


def test_stats_of_an_empty_log(tmp_path, monkeypatch):
    monkeypatch.setenv("ADVISOR_DB", str(tmp_path / "none.db"))
    res = CliRunner().invoke(main, ["audit", "stats"])
    assert res.exit_code == 0 and "No advice recorded yet." in res.output
