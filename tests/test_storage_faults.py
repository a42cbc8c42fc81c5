"""Storage faults and the audit log's outer defences: every broken database ends in one clear message and a
non-zero exit (never a traceback), the Slack app says so on /healthz and to the user, SQLite's integrity check
catches damage the hash chain cannot see, anchors catch a truncated or rewritten log, backups are consistent,
exports round-trip every character, and stored text never drives the terminal."""
from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3

import pytest
from click.testing import CliRunner

from bot.store.audit import AuditLog
from bot.store.faults import StorageError
from bot.surfaces.cli.main import main as cli

UTC = dt.timezone.utc


def run(db, *args: str):
    """The CLI in-process with ADVISOR_DB=db; (exit code, stdout + stderr)."""
    result = CliRunner().invoke(cli, list(args), env={"ADVISOR_DB": str(db)}, catch_exceptions=False)
    return result.exit_code, result.output


def record(i: int, question: str = "serve llama 3 8b for 4 users") -> dict:
    return {"surface": "cli", "user": "me", "question": f"{question} #{i}", "status": "answer",
            "reply": {"status": "answer", "text": f"answer {i}"}}


@pytest.fixture
def filled(tmp_path):
    db = tmp_path / "advisor.db"
    with AuditLog(db) as log:
        for i in range(30):
            log.append(record(i))
    return db


# ----- broken databases: one message, non-zero exit, everywhere --------------------------------------------------
def _damage(kind: str, db, tmp_path):
    if kind == "directory":
        db.mkdir()
    elif kind == "text file":
        db.write_text("these are my notes, not a database\n" * 50)
    elif kind == "header overwritten":
        with AuditLog(db) as log:
            log.append(record(1))
            log.checkpoint()
        with open(db, "r+b") as handle:
            handle.write(b"\x00" * 100)
    elif kind == "truncated":
        with AuditLog(db) as log:
            for i in range(200):
                log.append(record(i, "x" * 500))
            log.checkpoint()
        size = db.stat().st_size
        with open(db, "r+b") as handle:
            handle.truncate(size // 3)


@pytest.mark.parametrize("kind", ["directory", "text file", "header overwritten", "truncated"])
@pytest.mark.parametrize("command", [["ask", "serve llama 3 8b"], ["audit", "list"], ["audit", "verify"]])
def test_a_broken_database_gives_one_clear_message_and_a_non_zero_exit(tmp_path, kind, command):
    db = tmp_path / "advisor.db"
    _damage(kind, db, tmp_path)
    code, out = run(db, *command)
    assert code != 0, out
    assert "Traceback" not in out and out.count("Error:") == 1, out
    assert str(db) in out                                         # which file
    assert "ADVISOR_DB" in out or "backup" in out                 # how to fix it


def test_damage_the_chain_cannot_see_fails_verify_and_doctor(filled):
    """Zeroed index pages: reading the table in order still works and the chain verifies, but SQLite's
    integrity check (now run first by `audit verify` and `doctor`) reports the damage."""
    conn = sqlite3.connect(filled)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'advice_user'").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with open(filled, "r+b") as handle:
        handle.seek((root - 1) * page_size + 8)
        handle.write(os.urandom(page_size - 8))
    code, out = run(filled, "audit", "verify")
    assert code == 1 and "integrity check" in out and "Traceback" not in out
    code, out = run(filled, "doctor")
    assert code != 0 and "is damaged" in out


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to a read-only file anyway; "
                                              "test_read_only_and_full_are_storage_errors covers the message")
def test_a_read_only_database_file_is_reported(filled):
    filled.chmod(0o444)
    code, out = run(filled, "ask", "serve llama 3 8b")
    assert code == 4 and "read-only" in out and "Traceback" not in out


def test_read_only_and_full_are_storage_errors(filled):
    with AuditLog(filled) as log:
        log.db.conn.execute("PRAGMA query_only = ON")           # SQLite answers as for a read-only file
        with pytest.raises(StorageError, match="read-only .*writable"):
            log.append(record(99))
    with AuditLog(filled) as log:
        pages = log.db.conn.execute("PRAGMA page_count").fetchone()[0]
        log.db.conn.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full now
        with pytest.raises(StorageError, match="disk holding .* is full") as caught:
            for i in range(200):
                log.append(record(i, "y" * 2000))
    assert caught.value.exit_code == 4 and "df -h" in caught.value.fix


# ----- backups and anchors ------------------------------------------------------------------------------------
def test_backup_is_a_consistent_copy_and_never_overwrites(filled, tmp_path):
    target = tmp_path / "copy.db"
    code, out = run(filled, "audit", "backup", str(target))
    assert code == 0 and "integrity check ok" in out
    with AuditLog(target) as copy:
        assert copy.count() == 30 and copy.verify().ok
    code, out = run(filled, "audit", "backup", str(target))
    assert code == 2 and "already exists" in out


def test_anchors_catch_a_truncated_tail_and_a_rewritten_log(filled, tmp_path):
    anchors = tmp_path / "anchors.jsonl"
    assert run(filled, "audit", "anchor", "-o", str(anchors))[0] == 0
    code, out = run(filled, "audit", "verify", "--anchors", str(anchors))
    assert code == 0 and "1 anchor(s)" in out

    rewritten = tmp_path / "rewritten.db"                      # the same questions, re-written from scratch
    with AuditLog(rewritten, clock=lambda: dt.datetime(2030, 1, 1, tzinfo=UTC)) as log:
        for i in range(30):
            log.append(record(i))
    assert run(rewritten, "audit", "verify")[0] == 0             # the chain alone cannot tell
    code, out = run(rewritten, "audit", "verify", "--anchors", str(anchors))
    assert code == 1 and "A000030 now has another hash" in out

    conn = sqlite3.connect(filled)                               # cut off the newest rows, chain still intact
    conn.execute("DROP TRIGGER advice_no_delete")
    conn.execute("DELETE FROM advice WHERE seq > 25")
    conn.execute("UPDATE sqlite_sequence SET seq = 25 WHERE name = 'advice'")
    conn.commit()
    conn.close()
    assert run(filled, "audit", "verify")[0] == 0
    code, out = run(filled, "audit", "verify", "--anchors", str(anchors))
    assert code == 1 and "truncated" in out and "A000030" in out


# ----- export round trip and terminal safety ------------------------------------------------------------------
TRICKY = "a\rb\r\nc\u2028d\x85e\x1cf \"quoted\", comma\ttab \U0001f600 \\ end\n"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_round_trips_every_character(tmp_path, fmt):
    db = tmp_path / "a.db"
    with AuditLog(db) as log:
        log.append(record(1, TRICKY))
        log.append(record(2))
    out = tmp_path / f"log.{fmt}"
    assert run(db, "audit", "export", "--format", fmt, "-o", str(out))[0] == 0
    with AuditLog(tmp_path / "restored.db") as restored:
        restored.load_export(out)
        assert restored.verify().ok
        assert restored.get("A000001")["question"] == f"{TRICKY} #1"


def test_list_and_show_never_print_escape_sequences(tmp_path):
    db = tmp_path / "a.db"
    with AuditLog(db) as log:
        log.append(record(1, "evil \x1b]0;pwned\x07\x1b[2J\x9b31m\u202egnp.exe"))
    for command in (["audit", "list"], ["audit", "show", "A000001"]):
        code, out = run(db, *command)
        assert code == 0 and "evil" in out
        assert not any(ch in out for ch in "\x1b\x07\x9b\u202e"), repr(out)
    code, out = run(db, "audit", "show", "A000001", "--json")
    assert "\\u001b" in out and "\\u009b" in out and "\x9b" not in out
    assert json.loads(out)["question"].startswith("evil \x1b]0;pwned")      # the JSON still holds the truth


# ----- credentials pasted into questions --------------------------------------------------------------------------
def test_pasted_credentials_are_redacted_and_the_record_says_so(tmp_path):
    db = tmp_path / "a.db"
    secret, token = "8f742231b10e8888abcd991234567a5b", "xoxb-1111-2222-abcdefghijkl"
    code, _out = run(db, "ask", f"my signing secret is {secret} and token {token}, serve llama 3 8b")
    assert code == 0
    with AuditLog(db) as log:
        [row] = log.list()
    stored = json.dumps(row, ensure_ascii=False)
    assert secret not in stored and token not in stored
    assert "[redacted secret]" in row["question"] and "[redacted token]" in row["question"]
    assert len(row["reply"]["redacted"]) == 2 and log_ok(db)
    assert row["kb_version"] and "redacted" not in row["kb_version"]     # hashes elsewhere are left alone


def log_ok(db) -> bool:
    with AuditLog(db) as log:
        return log.verify().ok


def test_a_secret_inside_slack_api_base_url_is_never_printed(tmp_path):
    """In a bad URL's error (serve), in doctor's report, and in the log filter's list of secrets."""
    from bot.surfaces.slack.settings import safe_url, url_secrets
    url = "https://proxyuser:hunter2-proxy-pass@slack-proxy.example/api/?key=s3cr3t-query-key"
    shown = safe_url(url)
    assert "hunter2" not in shown and "s3cr3t" not in shown and shown.startswith("https://***@slack-proxy.example")
    assert {"hunter2-proxy-pass", "key=s3cr3t-query-key"} <= set(url_secrets(url))
    env = {"ADVISOR_DB": str(tmp_path / "a.db"), "SLACK_API_BASE_URL": url, "SLACK_BOT_TOKEN": "xoxb-1-2-abcdefgh",
           "SLACK_SIGNING_SECRET": "8f742231b10e8888abcd991234567a5b"}
    for args in (["doctor"], ["serve", "--http", "--port", "0"]):
        result = CliRunner().invoke(cli, args, env=env)
        assert "hunter2" not in result.output and "s3cr3t" not in result.output, result.output
        assert "SLACK_API_BASE_URL" in result.output


# ----- schema versions ----------------------------------------------------------------------------------------
def test_a_file_from_before_versioning_is_migrated_in_place(tmp_path):
    from bot.store.migrations import SCHEMA_VERSION
    from bot.store.schema import SCHEMA, statements
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)                                 # what release 0 left: the audit tables, no version
    for statement in statements(SCHEMA):
        conn.execute(statement)
    conn.commit()
    conn.close()
    with AuditLog(db) as log:
        log.append(record(1))
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 0")
    conn.execute("DROP TABLE IF EXISTS inbox")
    conn.execute("DROP TABLE IF EXISTS sessions")
    conn.commit()
    conn.close()
    code, out = run(db, "ask", "serve llama 3 8b")               # opens every store: all steps run once
    assert code == 0, out
    conn = sqlite3.connect(db)
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert version == SCHEMA_VERSION and {"advice", "sessions", "inbox", "feedback"} <= tables
    assert run(db, "audit", "verify")[0] == 0


def test_a_file_from_a_newer_release_is_refused(tmp_path):
    db = tmp_path / "new.db"
    with AuditLog(db) as log:
        log.append(record(1))
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    code, out = run(db, "audit", "list")
    assert code == 2 and "newer gpu-advisor" in out and "schema version 99" in out and "Traceback" not in out
