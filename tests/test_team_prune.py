"""`audit prune --team T`: one workspace's old records out of the one shared chain, on SQLite and PostgreSQL.

The chain of every test below (Clock starts 2026-03-01 09:00 UTC; `A`/`B` are the teams):
    seq 1 A  Mar 1 | seq 2 B  Mar 1 | seq 3 A  Mar 1 | seq 4 A Mar 2 | seq 5 A Mar 2 | seq 6 B Mar 2
    seq 7 A  Mar 12 | seq 8 B Mar 12
Pruning A before Mar 5 removes seqs 1, 3, 4, 5 (4 rows) in two runs, [1] and [3..5] (2 and 6 are B's and stay),
appends checkpoint seq 9 listing them, and leaves 2, 6, 7, 8, 9: five rows that verify.
"""
from __future__ import annotations

import datetime as dt

import pytest
from click.testing import CliRunner

from bot.store.backend import open_audit, open_slack_state
from fakes import Clock
from test_store_backends import raw, unprotect


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path):
    if request.param == "sqlite":
        return tmp_path / "advisor.db"
    return request.getfixturevalue("postgres_url")


def _record(team: str, i: int) -> dict:
    return {"surface": "dm", "team": team, "channel": f"D{team}", "user": f"U{team}", "status": "answer",
            "question": f"question {i}", "reply": {"text": f"answer {i}"}}


def _fill(target, clock: Clock):
    log = open_audit(target, clock=clock)
    for team in "ABA":
        log.append(_record(team, 0))
    clock.advance(days=1)
    for team in "AAB":
        log.append(_record(team, 1))
    clock.advance(days=10)
    for team in "AB":
        log.append(_record(team, 2))
    return log


def test_team_prune_removes_one_workspace_and_the_rest_verifies(target):
    clock = Clock()
    log = _fill(target, clock)
    assert log.prunable_team("A", dt.date(2026, 3, 5)) == 4
    result = log.prune_team("A", dt.date(2026, 3, 5))
    assert (result.pruned, result.first, result.last, result.checkpoint) == (4, "A000001", "A000005", "A000009")
    point = log.get("A000009")
    assert (point["surface"], point["status"], point["team"]) == ("system", "team_pruned", "A")
    gaps = point["reply"]["team_prune"]["gaps"]
    assert [(g[0], g[1]) for g in gaps] == [(1, 1), (3, 5)]
    assert [r["seq"] for r in log.iter_all()] == [2, 6, 7, 8, 9]
    check = log.verify()
    assert check.ok and check.checked == 5
    assert [r["id"] for r in log.list(limit=None, team="B")] == ["A000008", "A000006", "A000002"]
    log.append(_record("B", 3))
    assert log.verify().ok
    assert log.prune_team("A", dt.date(2026, 3, 5)).pruned == 0             # nothing older left


def test_team_prune_then_a_prefix_prune_still_verify(target):
    clock = Clock()
    log = _fill(target, clock)
    log.prune_team("A", dt.date(2026, 3, 5))
    result = log.prune(dt.date(2026, 3, 5))          # the prefix left before Mar 5: B's 2 and 6
    assert (result.pruned, result.first, result.last) == (2, "A000002", "A000006")
    assert log.verify().ok


def test_a_row_deleted_outside_the_listed_runs_is_still_caught(target):
    clock = Clock()
    log = _fill(target, clock)
    log.prune_team("A", dt.date(2026, 3, 5))
    unprotect(target)
    raw(target, "DELETE FROM advice WHERE seq = 6")                          # B's row, not listed anywhere
    bad = log.verify()
    assert not bad.ok and bad.first_bad == "A000007" and "A000006 missing after A000002" in bad.problem


def test_editing_the_list_of_runs_breaks_the_chain(target):
    clock = Clock()
    log = _fill(target, clock)
    log.prune_team("A", dt.date(2026, 3, 5))
    unprotect(target)
    stored = log.get("A000009")["reply"]
    stored["team_prune"]["gaps"].append([6, 6, "x" * 64, "y" * 64])            # try to excuse deleting row 6 too
    import json
    raw(target, f"UPDATE advice SET reply = '{json.dumps(stored)}' WHERE seq = 9")
    bad = log.verify()
    assert not bad.ok and bad.first_bad in ("A000006", "A000009")


def test_cli_prune_team_uses_the_workspace_retention(tmp_path, monkeypatch):
    from bot.surfaces.cli.audit import audit as audit_cli
    db = tmp_path / "advisor.db"
    monkeypatch.setenv("ADVISOR_DB", str(db))
    _fill(db, Clock())                                 # all dated March 2026, months before today
    run = lambda *a: CliRunner().invoke(audit_cli, ["prune", *a])          # noqa: E731
    refused = run("--team", "A", "--yes")
    assert refused.exit_code == 2 and "no retention set" in refused.output
    open_slack_state(db).set_team_settings("A", "UADMIN", provider=None, currency=None, retention_days=30)
    done = run("--team", "A", "--yes")
    assert done.exit_code == 0, done.output
    assert "keeps records 30 days" in done.output and "Pruned 5 record(s) of A" in done.output
    log = open_audit(db)
    assert log.verify().ok and {r["team"] for r in log.iter_all() if r["surface"] != "system"} == {"B"}
    assert run("--yes").exit_code == 2                 # no --team and no --before: what to prune is not said
