"""Conversation state: keys, save/load, expiry with an injected clock, thread safety, sharing the audit file."""
from __future__ import annotations

import datetime as dt
import sqlite3
import threading

import pytest

from bot.store.audit import AuditLog
from bot.store.sessions import SessionStore, session_id, session_key
from fakes import Clock



@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(tmp_path, clock):
    with SessionStore(tmp_path / "advisor.db", ttl_seconds=3600, clock=clock) as s:
        yield s


@pytest.mark.parametrize("args,expected", [
    # a mention in a channel thread: one conversation per user per thread
    (("mention", "T01", "C02", "1712345678.000100", "U03"), "slack:T01:C02:1712345678.000100:U03"),
    # a button continues the conversation of the message it belongs to (same namespace)
    (("button", "T01", "C02", "1712345678.000100", "U03"), "slack:T01:C02:1712345678.000100:U03"),
    # a DM has no thread
    (("dm", "T01", "D04", None, "U03"), "slack:T01:D04:-:U03"),
    # the CLI: thread is the --session name, user the local account
    (("cli", None, None, "default", "alice"), "cli:-:-:default:alice"),
    # separators inside parts are escaped, so keys never collide
    (("cli", None, None, "a:b", "c"), "cli:-:-:a%3Ab:c"),
    (("CLI", None, None, "a%b", "c"), "cli:-:-:a%25b:c"),
    # empty strings count as missing
    (("slash", "T01", "C02", "", "U03"), "slack:T01:C02:-:U03"),
])
def test_session_key(args, expected):
    assert session_key(*args) == expected


def test_session_key_needs_a_surface():
    with pytest.raises(ValueError):
        session_key("", "T", "C", None, "U")


def test_session_id_is_short_stable_and_distinct():
    a = session_key("mention", "T01", "C02", "1.1", "U03")
    b = session_key("mention", "T01", "C02", "1.1", "U04")
    assert session_id(a) == session_id(a)
    assert session_id(a) != session_id(b)
    assert session_id(a).startswith("slack-") and len(session_id(a)) == len("slack-") + 10
    assert session_id(session_key("cli", None, None, "x", "alice")).startswith("cli-")


def test_save_load_round_trip_and_overwrite(store):
    key = session_key("dm", "T", "D", None, "U")
    assert store.load(key) is None
    state = {"slots": {"model": "qwen2.5-7b", "method": "lora"}, "pending": ["budget"], "lang": "zh",
             "last_question": "用 LoRA 微调 Qwen2.5-7B", "deadline": dt.date(2026, 4, 1)}
    store.save(key, state)
    assert store.load(key) == {**state, "deadline": "2026-04-01"}     # dates are stored as ISO text
    store.save(key, {"slots": {}})
    assert store.load(key) == {"slots": {}}


def test_expiry_with_injected_clock(store, clock):
    store.save("k", {"n": 1})
    clock.advance(seconds=3599)
    assert store.load("k") == {"n": 1}            # one second before the TTL: still there
    store.save("k", {"n": 2})                      # saving restarts the TTL
    clock.advance(seconds=3599)
    assert store.load("k") == {"n": 2}
    clock.advance(seconds=1)
    assert store.load("k") is None                 # at the TTL: gone, as if never saved
    store.save("fresh", {"n": 3})
    assert store.purge_expired() == 1              # only the expired one is deleted
    assert store.load("fresh") == {"n": 3}
    assert store.purge_expired() == 0


def test_clear(store):
    store.save("k", {"n": 1})
    assert store.clear("k") is True
    assert store.load("k") is None
    assert store.clear("k") is False


@pytest.mark.parametrize("bad", [["not", "a", "dict"], "text", None])
def test_save_rejects_non_dict_state(store, bad):
    with pytest.raises(TypeError):
        store.save("k", bad)


def test_ttl_must_be_positive(tmp_path):
    with pytest.raises(ValueError):
        SessionStore(tmp_path / "x.db", ttl_seconds=0)


def test_threads_share_one_store_and_two_stores_share_a_file(tmp_path):
    path = tmp_path / "advisor.db"
    first, second = SessionStore(path), SessionStore(path)
    errors: list[Exception] = []

    def work(n: int) -> None:
        target = first if n % 2 else second
        try:
            for i in range(30):
                target.save(f"k{n}", {"turn": i})
                assert target.load(f"k{n}") == {"turn": i}
        except Exception as exc:  # noqa: BLE001 # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert all(first.load(f"k{n}") == {"turn": 29} for n in range(8))


def test_sessions_and_audit_share_one_wal_file(tmp_path):
    path = tmp_path / "advisor.db"
    store, log = SessionStore(path), AuditLog(path)
    store.save("k", {"slots": {}})
    log.append({"surface": "cli", "status": "answer", "session": session_id("k")})
    conn = sqlite3.connect(str(path))
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"sessions", "advice", "slack_events"} <= tables
    conn.close()
    assert store.load("k") == {"slots": {}} and log.verify().ok
