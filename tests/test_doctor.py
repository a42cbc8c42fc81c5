"""`gpu-advisor doctor`: one ok/warn/fail line per check with the fix, exit 1 on any fail, never a secret shown."""
from __future__ import annotations

import sqlite3

import pytest
from click.testing import CliRunner

from bot.surfaces.cli.main import main

BOT = "xoxb-1111111111-2222222222-AbCdEfGhIjKlMnOp"
APP = "xapp-1-A0123456789-1234567890-0123456789abcdef"
SECRET = "8f14e45fceea167a5a36dedd4bea2543"
SLACK_VARS = ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "SLACK_API_BASE_URL")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    for var in SLACK_VARS + ("ADVISOR_LOG_FORMAT", "ADVISOR_LOG_LEVEL", "ADVISOR_DEFAULT_PROVIDER",
                             "ADVISOR_SLASH_COMMAND", "ADVISOR_KNOWLEDGE_DIR", "ADVISOR_RULES_DIR", "PORT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(tmp_path / "cache"))


def doctor(monkeypatch, **env):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    res = CliRunner().invoke(main, ["doctor"], catch_exceptions=False)
    for value in (BOT, APP, SECRET, *env.values()):
        if len(value) >= 20 and value.startswith(("xox", "xapp", "8f14", '"')):
            assert value.strip('"') not in res.output, "a secret was printed"
    return res


def lines(res, status):
    return [line for line in res.output.splitlines() if line.startswith(status)]


def test_cli_only_install_is_ready_with_a_slack_warning(monkeypatch):
    res = doctor(monkeypatch)
    assert res.exit_code == 0, res.output
    assert "ready: no problems" in res.output
    assert any("knowledge" in line and "flavors" in line for line in lines(res, "ok"))
    assert any("will be created on first use; WAL mode works there" in line for line in lines(res, "ok"))
    warn = lines(res, "warn")
    assert len(warn) == 1 and "no Slack settings" in warn[0]
    assert "fix: set SLACK_BOT_TOKEN" in res.output


def test_http_mode_settings_are_shown_by_kind_only(monkeypatch):
    res = doctor(monkeypatch, SLACK_BOT_TOKEN=BOT, SLACK_SIGNING_SECRET=SECRET, PORT="8080")
    assert res.exit_code == 0, res.output
    assert "serve would use HTTP mode" in res.output and "port 8080" in res.output
    assert "SLACK_BOT_TOKEN xoxb-…(set), well-formed" in res.output
    assert "SLACK_SIGNING_SECRET (set, 32 characters), well-formed" in res.output


def test_socket_mode_needs_no_signing_secret(monkeypatch):
    res = doctor(monkeypatch, SLACK_BOT_TOKEN=BOT, SLACK_APP_TOKEN=APP)
    assert res.exit_code == 0, res.output
    assert "serve would use Socket Mode" in res.output
    assert "SLACK_APP_TOKEN xapp-…(set), well-formed" in res.output


@pytest.mark.parametrize("env, fail_text, fix_text", [
    # the app-level token pasted into the bot token's place
    ({"SLACK_BOT_TOKEN": APP, "SLACK_SIGNING_SECRET": SECRET}, "SLACK_BOT_TOKEN xapp-…(set) is not a bot token",
     "put it in SLACK_APP_TOKEN"),
    # a user token instead of the bot token
    ({"SLACK_BOT_TOKEN": "xoxp-1111-2222-3333-abcdefabcdef", "SLACK_SIGNING_SECRET": SECRET},
     "SLACK_BOT_TOKEN xoxp-…(set) is not a bot token", "this is a user token"),
    # HTTP mode without the signing secret
    ({"SLACK_BOT_TOKEN": BOT}, "SLACK_SIGNING_SECRET (not set), needed in http mode", "Signing Secret"),
    # a signing secret of the wrong length
    ({"SLACK_BOT_TOKEN": BOT, "SLACK_SIGNING_SECRET": SECRET[:-2]}, "is not 32 hexadecimal characters",
     "App Credentials"),
    # quotes kept by an env file
    ({"SLACK_BOT_TOKEN": BOT, "SLACK_SIGNING_SECRET": f'"{SECRET}"'}, "is wrapped in quotes", "remove the quotes"),
    # the bot token given as the app-level token
    ({"SLACK_BOT_TOKEN": BOT, "SLACK_APP_TOKEN": BOT}, "SLACK_APP_TOKEN xoxb-…(set) is not an app-level token",
     "put it in SLACK_BOT_TOKEN"),
    # a secret set but no bot token at all
    ({"SLACK_SIGNING_SECRET": SECRET}, "SLACK_BOT_TOKEN (not set), needed in http mode", "Bot User OAuth Token"),
    ({"SLACK_BOT_TOKEN": BOT, "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_BASE_URL": "slack.com/api"},
     "SLACK_API_BASE_URL='slack.com/api' is not an http(s) URL", "unset it"),
    ({"ADVISOR_LOG_FORMAT": "xml"}, "ADVISOR_LOG_FORMAT='xml' is not one of text, json", "set ADVISOR_LOG_FORMAT"),
    ({"ADVISOR_LOG_LEVEL": "chatty"}, "ADVISOR_LOG_LEVEL='chatty' is not one of", "DEBUG, INFO"),
    ({"ADVISOR_DEFAULT_PROVIDER": "huawei"}, "ADVISOR_DEFAULT_PROVIDER='huawei' is not a provider",
     "did you mean huaweicloud?"),
    ({"ADVISOR_SLASH_COMMAND": "gpu advisor"}, "is not a slash command", "starting with '/'"),
    ({"PORT": "http"}, "PORT='http' is not a TCP port", "1-65535"),
    ({"ADVISOR_KNOWLEDGE_DIR": "/nonexistent/knowledge"}, "ADVISOR_KNOWLEDGE_DIR: ADVISOR_KNOWLEDGE_DIR="
     "/nonexistent/knowledge is not a directory", "point ADVISOR_KNOWLEDGE_DIR"),
])
def test_each_bad_setting_fails_with_its_fix(monkeypatch, env, fail_text, fix_text):
    res = doctor(monkeypatch, **env)
    assert res.exit_code == 1, res.output
    fails = lines(res, "fail")
    assert any(fail_text in line for line in fails), res.output
    assert fix_text in res.output
    assert "problem(s)" in res.output.splitlines()[-1]


def test_a_broken_knowledge_file_is_named(monkeypatch, tmp_path):
    import shutil

    from bot.records import config
    kdir = tmp_path / "knowledge"
    shutil.copytree(config.knowledge_dir(), kdir)
    (kdir / "gpus.yaml").write_text("gpus:\n  - id: [unclosed\n", encoding="utf-8")
    res = doctor(monkeypatch, ADVISOR_KNOWLEDGE_DIR=str(kdir))
    assert res.exit_code == 1
    assert any("knowledge" in line and "gpus.yaml" in line for line in lines(res, "fail")), res.output


def test_database_folder_that_cannot_exist_fails(monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    res = doctor(monkeypatch, ADVISOR_DB=str(blocker / "advisor.db"))
    assert res.exit_code == 1
    assert any("database" in line and "cannot create the folder" in line for line in lines(res, "fail"))
    assert "set ADVISOR_DB to a writable file path" in res.output


def test_a_file_that_is_not_sqlite_fails(monkeypatch, tmp_path):
    db = tmp_path / "advisor.db"
    db.write_bytes(b"this is not a database" * 100)
    res = doctor(monkeypatch, ADVISOR_DB=str(db))
    assert res.exit_code == 1
    assert any("database" in line and "not a readable SQLite database" in line for line in lines(res, "fail"))


def test_an_existing_database_reports_its_records(monkeypatch, tmp_path):
    from bot.surfaces.service import Service
    db = tmp_path / "advisor.db"
    monkeypatch.setenv("ADVISOR_DB", str(db))
    Service(db=db).ask("lora finetune qwen2.5 7b", surface="cli", user="t", session="s")
    res = doctor(monkeypatch)
    assert res.exit_code == 0, res.output
    assert any("journal wal, 1 audit records" in line for line in lines(res, "ok")), res.output
    assert not list(tmp_path.glob(".gpu-advisor-doctor-*")), "the WAL probe left its scratch file"
    with sqlite3.connect(db) as conn:                          # doctor wrote nothing
        assert conn.execute("SELECT COUNT(*) FROM advice").fetchone()[0] == 1


def test_doctor_reports_each_tables_rows_and_oldest_row(monkeypatch, tmp_path):
    """What retention keeps, per table: rows, and the day of the oldest (the audit log and the inbox here)."""
    import datetime as dt

    from bot.store.audit import AuditLog
    from bot.store.inbox import Inbox
    db = tmp_path / "advisor.db"
    monkeypatch.setenv("ADVISOR_DB", str(db))
    day = dt.datetime(2026, 3, 14, 9, 0, tzinfo=dt.timezone.utc)
    with AuditLog(db, clock=lambda: day) as log:
        for n in range(3):
            log.append({"surface": "cli", "question": f"q{n}", "status": "answer"})
    with Inbox(db, clock=lambda: day + dt.timedelta(days=2)) as inbox:
        inbox.put("Ev1", "dm", {"text": "hi", "team": "T1"}, ["msg:D1:1"])
    res = doctor(monkeypatch)
    [tables] = [line for line in lines(res, "ok") if " tables " in line]
    assert "advice 3 (oldest 2026-03-14)" in tables and "inbox 1 (oldest 2026-03-16)" in tables
    assert "slack_events 2 (oldest 2026-03-16)" in tables and "sessions 0;" in tables


def test_database_on_a_network_filesystem_warns(monkeypatch):
    import bot.surfaces.doctor
    monkeypatch.setattr(bot.surfaces.doctor, "_mount_fstype", lambda path: "nfs4")
    res = doctor(monkeypatch)
    assert res.exit_code == 0
    assert any("network filesystem (nfs4)" in line for line in lines(res, "warn"))
