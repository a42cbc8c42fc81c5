"""`audit migrate` (SQLite -> PostgreSQL and back, verified on arrival), `--team` on `audit list/export`, and
`doctor` on a PostgreSQL URL (reachable, migrations current, never the password)."""
from __future__ import annotations

import datetime as dt
import json
from urllib.parse import urlsplit, urlunsplit

from click.testing import CliRunner

from bot.store.backend import open_audit
from bot.surfaces.cli.main import main

UTC = dt.timezone.utc


def with_password(url: str, password: str = "s3cret-pw") -> str:
    """The test server trusts local users, so a password in the URL is accepted and must never be printed."""
    parts = urlsplit(url)
    netloc = f"{parts.username or 'postgres'}:{password}@{parts.hostname}:{parts.port or 5432}"
    return urlunsplit(parts._replace(netloc=netloc))


def cli(*args, **env):
    return CliRunner().invoke(main, list(args), env=env or None, catch_exceptions=False)


def sqlite_log(path, n=5, prune=True):
    clock = type("C", (), {"now": dt.datetime(2026, 3, 1, 9, tzinfo=UTC), "__call__": lambda s: s.now})()
    log = open_audit(path, clock=clock)
    for i in range(n):
        log.append({"surface": "dm", "team": "T1" if i % 2 else "T2", "user": f"U{i}", "status": "answer",
                    "question": f"q{i} ☃\r", "reply": {"n": i}})
        clock.now += dt.timedelta(days=1)
    if prune:
        log.prune(dt.date(2026, 3, 3))                     # a checkpoint row: the copy must still verify
    return log


def test_migrate_sqlite_to_postgres_and_back_verifies_and_continues(tmp_path, postgres_url):
    source = sqlite_log(tmp_path / "advisor.db")
    head = source.verify().head
    url = with_password(postgres_url)
    res = cli("audit", "migrate", "--from", f"sqlite:{tmp_path / 'advisor.db'}", "--to", url)
    assert res.exit_code == 0, res.output
    assert "chain verified on arrival (4 record(s)" in res.output and "s3cret-pw" not in res.output
    assert "postgres:***@" in res.output
    copy = open_audit(postgres_url)
    assert copy.verify().head == head and copy.count() == 4
    copy.append({"surface": "cli", "status": "answer", "question": "after the move"})
    assert copy.verify().ok
    back = cli("audit", "migrate", "--from", url, "--to", f"sqlite:{tmp_path / 'back.db'}")
    assert back.exit_code == 0, back.output
    assert open_audit(tmp_path / "back.db").verify().head == copy.verify().head


def test_migrate_refuses_a_full_destination_and_a_broken_source(tmp_path, postgres_url):
    sqlite_log(tmp_path / "a.db", prune=False)
    assert cli("audit", "migrate", "--from", str(tmp_path / "a.db"), "--to", postgres_url).exit_code == 0
    again = cli("audit", "migrate", "--from", str(tmp_path / "a.db"), "--to", with_password(postgres_url))
    assert again.exit_code == 2 and "already holds audit records" in again.output
    assert "s3cret-pw" not in again.output
    import sqlite3
    conn = sqlite3.connect(tmp_path / "a.db")
    conn.executescript("DROP TRIGGER advice_no_update; UPDATE advice SET question = 'edited' WHERE seq = 2;")
    conn.close()
    broken = cli("audit", "migrate", "--from", f"sqlite:{tmp_path / 'a.db'}", "--to", f"sqlite:{tmp_path / 'b.db'}")
    assert broken.exit_code == 2 and "broken at A000002" in broken.output and not (tmp_path / "b.db").exists()
    missing = cli("audit", "migrate", "--from", f"sqlite:{tmp_path / 'none.db'}", "--to", postgres_url)
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_list_and_export_by_team(tmp_path, monkeypatch):
    sqlite_log(tmp_path / "advisor.db", prune=False)
    monkeypatch.setenv("ADVISOR_DB", str(tmp_path / "advisor.db"))
    listed = json.loads(cli("audit", "list", "--team", "T1", "--json").output)
    assert [r["id"] for r in listed] == ["A000004", "A000002"]
    assert "No audit records match" in cli("audit", "list", "--team", "T9").output
    out = tmp_path / "t2.jsonl"
    res = cli("audit", "export", "--format", "jsonl", "--team", "T2", "-o", str(out))
    assert res.exit_code == 0 and "exported 3 record(s)" in res.output
    assert {json.loads(line)["team"] for line in out.read_text().splitlines()} == {"T2"}


def test_list_by_team_on_postgres(postgres_url, monkeypatch):
    log = open_audit(postgres_url)
    for team in ("T1", "T2", "T1"):
        log.append({"surface": "dm", "team": team, "status": "answer"})
    monkeypatch.setenv("ADVISOR_DB", postgres_url)
    listed = json.loads(cli("audit", "list", "--team", "T1", "--json").output)
    assert [r["id"] for r in listed] == ["A000003", "A000001"]
    assert cli("audit", "verify").exit_code == 0


def test_doctor_checks_a_postgres_url_without_printing_its_password(postgres_url, monkeypatch):
    url = with_password(postgres_url)
    monkeypatch.setenv("ADVISOR_DB", url)
    pending = cli("doctor")
    assert "s3cret-pw" not in pending.output
    assert any(line.startswith("warn") and "migration(s) pending" in line for line in pending.output.splitlines())
    open_audit(postgres_url)
    ready = cli("doctor")
    assert "s3cret-pw" not in ready.output
    line = next(line for line in ready.output.splitlines() if "database" in line)
    assert line.startswith("ok") and "(current)" in line and "postgres:***@" in line


def test_doctor_fails_clearly_when_the_server_does_not_answer(monkeypatch):
    monkeypatch.setenv("ADVISOR_DB", "postgresql://bot:s3cret-pw@127.0.0.1:1/advisor")
    res = cli("doctor")
    assert res.exit_code == 1 and "s3cret-pw" not in res.output
    line = next(line for line in res.output.splitlines() if "database" in line)
    assert line.startswith("fail") and "cannot connect" in line


def test_sqlite_only_maintenance_says_what_to_use_on_postgres(postgres_url, monkeypatch, tmp_path):
    monkeypatch.setenv("ADVISOR_DB", with_password(postgres_url))
    res = cli("audit", "backup", str(tmp_path / "copy.db"))
    assert res.exit_code == 2 and "pg_dump" in res.output and "s3cret-pw" not in res.output
    assert not (tmp_path / "copy.db").exists()
    assert cli("audit", "checkpoint").exit_code == 0
