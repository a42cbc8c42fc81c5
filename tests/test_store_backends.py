"""The same store tests on both backends: SQLite always, PostgreSQL when a server answers (see conftest's
postgres_server: ADVISOR_TEST_POSTGRES_URL, else the local server; skipped with the reason where none answers)."""
from __future__ import annotations

import datetime as dt
import io
import sqlite3
import threading

import pytest

from bot.store.backend import describe, open_audit, open_inbox, open_sessions, open_slack_state
from bot.store.pg import DatabaseUrl, PgError, redact_url
from fakes import Clock



@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path):
    if request.param == "sqlite":
        return tmp_path / "advisor.db"
    return request.getfixturevalue("postgres_url")


def raw(target, *statements):
    """Run SQL behind the store's back (what a person with database access could do)."""
    if isinstance(target, str):
        import psycopg
        with psycopg.connect(target, autocommit=True) as conn:
            for sql in statements:
                conn.execute(sql)
        return
    conn = sqlite3.connect(str(target))
    try:
        for sql in statements:
            conn.execute(sql)
        conn.commit()
    finally:
        conn.close()


def unprotect(target):
    """Drop the append-only guard, as a determined person could (verify must still catch the edit)."""
    if isinstance(target, str):
        raw(target, "ALTER TABLE advice DISABLE TRIGGER advice_append_only")
    else:
        raw(target, "DROP TRIGGER advice_no_update", "DROP TRIGGER advice_no_delete")


def record(i, **over):
    base = {"surface": "dm", "team": "T1", "channel": "D1", "user": "U1", "status": "answer",
            "question": f"question {i}", "reply": {"text": f"answer {i}", "n": i}}
    return {**base, **over}


def fill(log, n, **over):
    return [log.append(record(i, **over)) for i in range(n)]


def test_append_chains_dedupes_and_reads_back(target):
    log = open_audit(target)
    entries = fill(log, 3)
    assert [e.id for e in entries] == ["A000001", "A000002", "A000003"]
    assert entries[1].prev_hash == entries[0].hash
    first = log.append(record(9, event_id="Ev1"))
    again = log.append(record(10, event_id="Ev1"))
    assert again.duplicate and again.id == first.id
    assert log.count() == 4
    assert log.get("A2")["reply"] == {"text": "answer 1", "n": 1}
    assert [r["id"] for r in log.list(limit=2)] == ["A000004", "A000003"]
    assert log.by_event("Ev1")["id"] == "A000004"
    assert log.verify().ok and log.verify().checked == 4


def test_claim_event_first_claimant_only(target):
    log = open_audit(target)
    assert log.claim_event("Ev9") is True
    assert log.claim_event("Ev9") is False


def test_sql_cannot_update_or_delete_rows(target):
    log = open_audit(target)
    fill(log, 2)
    for sql in ("UPDATE advice SET question = 'x'", "DELETE FROM advice"):
        with pytest.raises(Exception, match="append-only"):
            raw(target, sql)
    assert log.verify().ok


def test_verify_names_an_edited_row_and_a_deleted_tail(target):
    log = open_audit(target)
    fill(log, 4)
    unprotect(target)
    raw(target, "UPDATE advice SET question = 'edited' WHERE seq = 2")
    result = log.verify()
    assert (result.ok, result.first_bad) == (False, "A000002") and "edited" in result.problem
    raw(target, "DELETE FROM advice WHERE seq >= 2")
    result = log.verify()
    assert not result.ok and "missing" in result.problem and "deleted" in result.problem


def test_prune_leaves_a_verifiable_chain_that_continues(target):
    clock = Clock()
    log = open_audit(target, clock=clock)
    fill(log, 3)
    clock.advance(days=10)
    fill(log, 2)
    result = log.prune(dt.date(2026, 3, 5))
    assert (result.pruned, result.last, result.checkpoint) == (3, "A000003", "A000006")
    log.append(record(7))
    assert log.verify().ok and log.count() == 4


def test_export_loads_into_a_fresh_sqlite_log_and_verifies(target, tmp_path):
    log = open_audit(target)
    fill(log, 3, question="unicode ☃ and a \r return")
    out = io.StringIO()
    assert log.export("jsonl", out) == 3
    path = tmp_path / "export.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    copy = open_audit(tmp_path / "copy.db")
    assert copy.load_export(path) == 3
    assert copy.verify().ok and copy.verify().head == log.verify().head


def test_concurrent_threads_form_one_chain(target):
    log = open_audit(target)
    errors = []

    def work(worker):
        try:
            for i in range(15):
                log.append(record(i, user=f"U{worker}"))
        except Exception as exc:  # noqa: BLE001 # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert log.count() == 60 and log.verify().ok


def test_sessions_save_load_expire(target):
    clock = Clock()
    store = open_sessions(target, ttl_seconds=3600, clock=clock)
    store.save("slack:T:C:-:U", {"slots": {"model": "llama-3-8b"}, "when": dt.date(2026, 3, 1)})
    assert store.load("slack:T:C:-:U") == {"slots": {"model": "llama-3-8b"}, "when": "2026-03-01"}
    assert store.count() == 1
    clock.advance(hours=2)
    assert store.load("slack:T:C:-:U") is None and store.purge_expired() == 1
    store.save("k", {"a": 1})
    assert store.clear("k") and not store.clear("k")


def test_inbox_dedupes_by_any_key_and_finishes_once(target):
    inbox = open_inbox(target)
    assert inbox.put("Ev1", "event", {"text": "hi", "response_url": "https://hooks/x"}, keys=["msg:C1:1.0"])
    assert not inbox.put("Ev1-retry", "event", {"text": "hi"}, keys=["msg:C1:1.0"])    # same message, other id
    assert not inbox.put("Ev1", "event", {"text": "hi"})
    inbox.close()
    inbox = open_inbox(target)                                # a restart resumes the job its predecessor left
    assert [j.id for j in inbox.open_jobs()] == ["Ev1"]
    job = inbox.start("Ev1")
    assert job.attempts == 1 and job.state == "running"
    inbox.posted("Ev1", 2, "A000001")
    inbox.posted("Ev1", 1)                                   # a late, smaller count never goes back
    inbox.finish("Ev1", advice_id="A000001", delivered=True)
    done = inbox.get("Ev1")
    assert (done.state, done.parts_posted, done.delivered) == ("done", 2, True)
    assert "response_url" not in done.payload and inbox.start("Ev1") is None
    assert inbox.counts() == {"done": 1} and inbox.delivery("A000001").id == "Ev1"


def test_slack_state(target):
    state = open_slack_state(target)
    state.add_feedback("A000001", "U1", "T1", True)
    state.add_feedback("A000001", "U1", "T1", False)          # a second click replaces the first
    assert [(f["user"], f["helpful"]) for f in state.feedback()] == [("U1", 0)]
    state.set_pref("T1", "U1", provider="aws")
    state.set_pref("T1", "U1", currency="EUR")
    assert state.prefs("T1", "U1") == {"provider": "aws", "currency": "EUR"}
    state.set_pref("T1", "U1", provider=None)
    assert state.prefs("T1", "U1") == {"currency": "EUR"}
    state.join_thread("C1", "1.0")
    state.join_thread("C1", "1.0")
    assert state.in_thread("C1", "1.0") and not state.in_thread("C1", "2.0")


def test_service_turn_records_on_either_backend(target, core):
    from bot.surfaces.service import Service
    service = Service(core=core, db=target)
    out = service.ask("serve llama 3 8b for 20 users", surface="cli", user="alice")
    row = service.audit.get(out["advice_id"])
    assert row["question"] == "serve llama 3 8b for 20 users" and service.audit.verify().ok
    assert service.sessions.count() == 1


# ---- PostgreSQL only -------------------------------------------------------------------------------------


def test_postgres_migrations_are_versioned_and_idempotent(postgres_url):
    from bot.store.pg import migrate, schema_status
    from bot.store.pg_schema import MIGRATIONS
    assert schema_status(postgres_url) == ([], [v for v, _, _ in MIGRATIONS])
    open_audit(postgres_url)
    assert schema_status(postgres_url) == ([v for v, _, _ in MIGRATIONS], [])
    assert migrate(postgres_url) == []


def test_postgres_url_is_never_printed_with_its_password(postgres_url):
    assert redact_url("postgresql://bot:s3cret@db:5432/advisor") == "postgresql://bot:***@db:5432/advisor"
    assert redact_url("postgresql://db/advisor?user=bot&password=s3cret") == \
        "postgresql://db/advisor?user=bot&password=***"
    url = DatabaseUrl("postgresql://bot:s3cret@db/advisor")
    assert "s3cret" not in f"{url} {url!r} {describe(url)}" and url.secret.endswith("s3cret@db/advisor")
    log = open_audit(postgres_url)
    assert "password" not in str(log.path) or "***" in str(log.path)


def test_postgres_unreachable_is_one_clear_error_without_the_password():
    with pytest.raises(PgError) as caught:
        open_audit("postgresql://bot:s3cret@127.0.0.1:1/advisor")
    text = caught.value.render()
    assert "s3cret" not in text and "postgresql://bot:***@127.0.0.1:1/advisor" in text and "psql" in text


def test_config_keeps_a_postgres_url_whole(monkeypatch):
    from bot.records import config
    from bot.records.errors import ConfigError
    monkeypatch.setenv("ADVISOR_DB", "postgresql://bot@db:5432/advisor")
    assert config.db_target() == "postgresql://bot@db:5432/advisor"
    with pytest.raises(ConfigError, match="PostgreSQL URL"):
        config.db_path()


def test_postgres_read_only_database_is_one_clear_error(postgres_url):
    import psycopg
    from bot.store.pg import close_pools
    log = open_audit(postgres_url)
    log.append(record(1))
    name = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
    try:
        close_pools()
        log = open_audit(postgres_url)                      # opening a current schema needs no write
        assert log.verify().ok
        with pytest.raises(PgError, match="is read-only") as caught:
            log.append(record(2))
        assert "primary" in caught.value.render()
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("SET default_transaction_read_only = off")
            conn.execute(f'ALTER DATABASE "{name}" RESET default_transaction_read_only')
