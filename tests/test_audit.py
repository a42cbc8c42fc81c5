"""The audit log: append-only hash chain, concurrency, tamper detection, export, prune, diff, and the CLI."""
from __future__ import annotations

import datetime as dt
import io
import json
import math
import multiprocessing
import sqlite3
import threading

import pytest
from click.testing import CliRunner

from bot.store.audit import (
    ZERO_HASH, AuditError, AuditLog, Change, diff_records, format_id, parse_id, read_export, record_hash,
    verify_rows,
)
from bot.surfaces.cli.audit import audit as audit_cli
from fakes import Clock

UTC = dt.timezone.utc


def record(i: int = 0, **over):
    """A realistic record, as a surface would pass it."""
    rec = {
        "surface": "mention", "team": "T01", "channel": "C02", "user": f"U{i % 3}", "session": "slack-3fa9c01b2e",
        "question": f"lora finetune qwen2.5 7b #{i}, 预算有限", "status": "answer", "intent": "finetune",
        "slots": {"model": "qwen2.5-7b", "method": "lora", "budget": "low"},
        "recommendations": [{"provider": "huaweicloud", "flavor": "pi5e.2xlarge.4", "gpu": "L4", "gpu_count": 1,
                             "instances": 1, "price_per_hour": 12.5 + i, "currency": "CNY", "fits": True}],
        "rule_trace": [{"rule": "lora-fits-one-gpu", "fired": True, "because": "19.5 <= 24 GiB"}],
        "kb_version": "kb-abc123",
        "reply": {"status": "answer", "text": "Pick: pi5e.2xlarge.4", "memory": {"per_gpu_gib": 19.5}},
    }
    rec.update(over)
    return rec


def tamper(path, *statements):
    """What someone with the file could do: drop the append-only triggers, then change rows."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("DROP TRIGGER IF EXISTS advice_no_update")
    conn.execute("DROP TRIGGER IF EXISTS advice_no_delete")
    for sql in statements:
        conn.execute(sql)
    conn.close()


@pytest.fixture
def db(tmp_path):
    return tmp_path / "advisor.db"


@pytest.fixture
def log(db):
    with AuditLog(db, clock=Clock()) as audit_log:
        yield audit_log


def fill(audit_log: AuditLog, n: int, clock: Clock | None = None, **over) -> list:
    entries = []
    for i in range(n):
        entries.append(audit_log.append(record(i, **over)))
        if clock:
            clock.advance(days=1)
    return entries


# ------------------------------------------------------------------------------------------------ appending


def test_append_assigns_readable_ids_and_chains_hashes(log):
    entries = fill(log, 3)
    assert [e.id for e in entries] == ["A000001", "A000002", "A000003"]
    assert entries[0].prev_hash == ZERO_HASH
    assert [e.prev_hash for e in entries[1:]] == [e.hash for e in entries[:-1]]
    row = log.get("A000002")
    assert row["hash"] == record_hash(row, row["prev_hash"])
    assert row["ts"] == "2026-03-01T09:00:00Z"              # ISO-8601 UTC, seconds
    assert row["slots"] == {"model": "qwen2.5-7b", "method": "lora", "budget": "low"}   # JSON decoded
    assert log.verify().ok and log.verify().checked == 3


BASE = {"ts": "2026-03-01T09:00:00Z", **record(1)}


@pytest.mark.parametrize("field,value", [
    ("question", "full finetune qwen2.5 7b"),          # the words asked
    ("user", "U9"),                                       # who asked
    ("ts", "2026-03-02T09:00:00Z"),                       # when
    ("status", "follow_up"),                              # what kind of reply
    ("slots", {"model": "qwen2.5-7b"}),                   # what was understood
    ("recommendations", []),                              # what was advised
    ("rule_trace", None),                                 # why
    ("kb_version", "kb-def456"),                          # on which knowledge
    ("reply", {"status": "answer", "text": "Pick: p3"}),  # the whole reply
    ("event_id", "Ev123"),                                # the Slack event
])
def test_hash_covers_every_content_field(field, value):
    assert record_hash({**BASE, field: value}, ZERO_HASH) != record_hash(BASE, ZERO_HASH)


def test_hash_covers_prev_hash_and_ignores_key_order():
    assert record_hash(BASE, ZERO_HASH) != record_hash(BASE, "1" * 64)
    shuffled = dict(reversed(list(BASE.items())))
    shuffled["slots"] = dict(reversed(list(BASE["slots"].items())))
    assert record_hash(shuffled, ZERO_HASH) == record_hash(BASE, ZERO_HASH)


@pytest.mark.parametrize("bad,message", [
    ({**record(), "display_name": "Alice"}, "unknown audit field"),   # privacy: no fields beyond the record
    ({**record(), "token": "xoxb-1"}, "unknown audit field"),         # ... and certainly no tokens
    ({**record(), "surface": "email"}, "unknown surface"),             # surfaces are a closed list
    ({**record(), "surface": "system"}, "unknown surface"),            # "system" is reserved for checkpoints
    ({**record(), "status": None}, "needs a status"),                  # every reply has a status
    ({**record(), "ts": "2020-01-01T00:00:00Z"}, "does not take `ts`"),   # the log's own clock sets ts
])
def test_append_rejects_bad_records(log, bad, message):
    with pytest.raises(AuditError, match=message):
        log.append(bad)
    assert log.count() == 0


def test_append_normalises_values_and_redacts_tokens(log):
    class Model:                                     # stands in for a pydantic model
        def model_dump(self, mode="python"):
            return {"when": "2026-03-01", "n": 1}

    entry = log.append(record(
        question="my token is xoxb-123456789012-abcdefABCDEF, help",
        team=123,                                    # non-text ids are stored as text (and hashed as text)
        channel="",                                  # empty means not given
        slots={"deadline": dt.date(2026, 4, 1), "budget_amount": float("nan"), "model": Model()},
        reply={"text": "keys like sk-abcdefghijklmnopqrstuvwx must not be kept", "inf": math.inf},
    ))
    row = log.get(entry.id)
    assert row["question"] == "my token is [redacted token], help"
    assert row["team"] == "123" and row["channel"] is None
    assert row["slots"] == {"deadline": "2026-04-01", "budget_amount": None, "model": {"when": "2026-03-01", "n": 1}}
    assert "sk-" not in json.dumps(row["reply"]) and row["reply"]["inf"] is None
    assert log.verify().ok


def test_event_id_is_recorded_once(log):
    first = log.append(record(1, event_id="Ev01"))
    again = log.append(record(2, event_id="Ev01"))       # Slack retried the event
    assert not first.duplicate and again.duplicate
    assert again.id == first.id and again.hash == first.hash
    assert log.count() == 1


def test_claim_event_only_first_claimant_wins(db):
    a, b = AuditLog(db), AuditLog(db)                   # two app instances on one file
    assert a.claim_event("Ev42") is True
    assert a.claim_event("Ev42") is False
    assert b.claim_event("Ev42") is False
    assert b.claim_event("Ev43") is True
    with pytest.raises(AuditError):
        a.claim_event("")


def test_rows_cannot_be_updated_or_deleted_through_sql(log, db):
    fill(log, 2)
    conn = sqlite3.connect(str(db), isolation_level=None)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE advice SET question = 'x' WHERE seq = 1")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM advice WHERE seq = 1")
    conn.close()
    assert log.verify().ok


def test_wal_mode_and_readable_view(log, db):
    fill(log, 1)
    conn = sqlite3.connect(str(db))
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    row = conn.execute("SELECT id, top_flavor, top_gpu, top_price_per_hour, per_gpu_gib FROM advice_readable").fetchone()
    assert row == ("A000001", "pi5e.2xlarge.4", "L4", 12.5, 19.5)
    conn.close()


# ------------------------------------------------------------------------------------------------ concurrency

PROCESSES, PER_PROCESS, SHARED_EVENTS = 4, 50, 10


def _writer(path, worker, barrier, results):
    log = AuditLog(path)
    barrier.wait()
    written = duplicates = 0
    claimed = log.claim_event("shared-claim")
    for i in range(PER_PROCESS):
        # the first SHARED_EVENTS appends of every process carry the same Slack event ids
        event = f"shared-{i}" if i < SHARED_EVENTS else f"w{worker}-{i}"
        entry = log.append(record(i, user=f"U{worker}", event_id=event))
        duplicates += entry.duplicate
        written += not entry.duplicate
    log.close()
    results.put((worker, written, duplicates, claimed))


def test_concurrent_writer_processes_lose_and_duplicate_nothing(db):
    AuditLog(db).close()                                   # create the file before forking
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(PROCESSES), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(db), w, barrier, results)) for w in range(PROCESSES)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=30) for _ in procs]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    written = sum(o[1] for o in outcomes)
    duplicates = sum(o[2] for o in outcomes)
    expected = PROCESSES * (PER_PROCESS - SHARED_EVENTS) + SHARED_EVENTS
    assert written == expected and duplicates == (PROCESSES - 1) * SHARED_EVENTS
    assert sum(o[3] for o in outcomes) == 1                # exactly one process claimed the event
    log = AuditLog(db)
    rows = list(log.iter_all())
    assert [r["seq"] for r in rows] == list(range(1, expected + 1))   # no gap, no loss
    assert len({r["id"] for r in rows}) == expected                    # no duplicate id
    events = [r["event_id"] for r in rows]
    assert len(events) == len(set(events))                             # each event recorded once
    assert log.verify().ok


def test_concurrent_threads_share_one_log(db):
    shared, other = AuditLog(db), AuditLog(db)

    def work(target, n):
        for i in range(n):
            target.append(record(i))

    threads = [threading.Thread(target=work, args=(shared if t % 2 else other, 25)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert shared.count() == 200
    assert shared.verify().ok and shared.verify().checked == 200


# ------------------------------------------------------------------------------------------------ verification

TAMPERING = [
    # an edited question: the row's own hash no longer matches
    ("edit", ["UPDATE advice SET question = 'full finetune 70b' WHERE seq = 5"], "A000005", "edited"),
    # an edited JSON column: same
    ("edit-json", ["UPDATE advice SET recommendations = '[]' WHERE seq = 7"], "A000007", "edited"),
    # JSON broken by hand
    ("broken-json", ["UPDATE advice SET slots = '{oops' WHERE seq = 3"], "A000003", "not valid JSON"),
    # a deleted middle row: named is the row after the gap
    ("delete-middle", ["DELETE FROM advice WHERE seq = 5"], "A000006", "A000005 missing after A000004"),
    # several deleted rows
    ("delete-range", ["DELETE FROM advice WHERE seq BETWEEN 4 AND 6"], "A000007", "A000004..A000006 missing"),
    # the first row deleted, no checkpoint to explain it
    ("delete-first", ["DELETE FROM advice WHERE seq = 1"], "A000002", "A000001 missing"),
    # the last rows deleted: the high-water mark remembers them
    ("delete-last", ["DELETE FROM advice WHERE seq >= 9"], "A000009", "A000009..A000010 missing"),
    # two rows' contents swapped (ids follow their positions): the chain shows the order
    ("reorder", ["UPDATE advice SET seq = -5, id = 'tmp' WHERE seq = 5",
                 "UPDATE advice SET seq = 5, id = 'A000005' WHERE seq = 6",
                 "UPDATE advice SET seq = 6, id = 'A000006' WHERE seq = -5"], "A000005", "reordered"),
    # positions swapped, ids kept: an id sits where another belongs
    ("renumber", ["UPDATE advice SET seq = -5 WHERE seq = 5",
                  "UPDATE advice SET seq = 5 WHERE seq = 6",
                  "UPDATE advice SET seq = 6 WHERE seq = -5"], "A000006", "reordered"),
]


@pytest.mark.parametrize("name,statements,first_bad,problem", TAMPERING, ids=[t[0] for t in TAMPERING])
def test_verify_names_the_first_tampered_row(log, db, name, statements, first_bad, problem):
    fill(log, 10)
    assert log.verify().ok
    tamper(db, *statements)
    result = log.verify()
    assert not result.ok
    assert result.first_bad == first_bad
    assert problem in result.problem


def test_verify_catches_an_edit_that_was_rehashed(log, db):
    fill(log, 6)
    row = log.get("A000003")
    row["question"] = "something else"
    new_hash = record_hash(row, row["prev_hash"])          # the tamperer recomputes that row's hash ...
    tamper(db, f"UPDATE advice SET question = 'something else', hash = '{new_hash}' WHERE seq = 3")
    result = log.verify()                                  # ... so the next row no longer links to it
    assert (result.ok, result.first_bad) == (False, "A000004")
    assert "A000003" in result.problem


def test_verify_empty_log_is_ok(log):
    assert log.verify().ok and log.verify().checked == 0


# ------------------------------------------------------------------------------------------------ reading


def test_list_filters_and_orders_newest_first(db):
    clock = Clock()
    with AuditLog(db, clock=clock) as log:
        fill(log, 6, clock=clock)                         # Mar 1..6, users U0 U1 U2 U0 U1 U2
        assert [r["id"] for r in log.list(limit=3)] == ["A000006", "A000005", "A000004"]
        assert [r["id"] for r in log.list(user="U1")] == ["A000005", "A000002"]
        assert [r["id"] for r in log.list(since=dt.date(2026, 3, 5))] == ["A000006", "A000005"]
        assert [r["id"] for r in log.list(user="U0", since=dt.date(2026, 3, 2))] == ["A000004"]
        assert len(log.list(session="slack-3fa9c01b2e", limit=None)) == 6
        assert log.list(session="nope") == []
        assert isinstance(log.list(limit=1)[0]["recommendations"], list)


@pytest.mark.parametrize("text,seq", [
    ("A000042", 42),    # canonical
    ("a42", 42),        # lower case, no padding
    ("42", 42),         # bare number
    (" A7 ", 7),        # stray spaces
])
def test_parse_id_accepts_the_forms_people_type(text, seq):
    assert parse_id(text) == seq and format_id(seq) == f"A{seq:06d}"


@pytest.mark.parametrize("text", ["", "B12", "A0", "A-1", "12a"])
def test_parse_id_rejects_non_ids(text):
    with pytest.raises(ValueError):
        parse_id(text)


def test_get_unknown_is_none(log):
    fill(log, 1)
    assert log.get("A000002") is None and log.get("garbage") is None and log.get("1")["id"] == "A000001"


# ------------------------------------------------------------------------------------------------ export


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_round_trip(tmp_path, log, fmt):
    fill(log, 4)
    log.append(record(9, team=None, channel=None, slots=None, rule_trace=[], question="多行\n问题, with \"quotes\""))
    out = tmp_path / f"audit.{fmt}"
    with open(out, "w", encoding="utf-8", newline="") as handle:
        assert log.export(fmt, handle) == 5
    original = list(log.iter_all())
    assert read_export(out) == original                   # the file says exactly what the log holds
    with AuditLog(tmp_path / "restored.db") as restored:
        assert restored.load_export(out) == 5
        assert list(restored.iter_all()) == original
        assert restored.verify().ok
        with pytest.raises(AuditError, match="already holds"):
            restored.load_export(out)                     # never merged into an existing log


def test_an_export_file_verifies_on_its_own(tmp_path, log):
    fill(log, 3)
    out = tmp_path / "audit.jsonl"
    with open(out, "w", encoding="utf-8") as handle:
        log.export("jsonl", handle)
    rows = read_export(out)
    assert verify_rows(rows).ok
    rows[1]["question"] = "changed"
    assert verify_rows(rows).first_bad == "A000002"


def test_export_of_a_tampered_log_fails_verification_after_load(tmp_path, log, db):
    fill(log, 3)
    buf = io.StringIO()
    log.export("jsonl", buf)
    lines = buf.getvalue().splitlines()
    edited = json.loads(lines[1])
    edited["question"] = "changed in the file"
    lines[1] = json.dumps(edited, ensure_ascii=False)
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with AuditLog(tmp_path / "restored.db") as restored:
        restored.load_export(path)
        assert restored.verify().first_bad == "A000002"


def test_export_rejects_unknown_format(log):
    with pytest.raises(AuditError, match="jsonl or csv"):
        log.export("xml", io.StringIO())


# ------------------------------------------------------------------------------------------------ prune


def test_prune_leaves_a_verifiable_chain_and_still_detects_tampering(tmp_path, db):
    clock = Clock()
    log = AuditLog(db, clock=clock)
    fill(log, 10, clock=clock)                            # Mar 1 .. Mar 10
    assert log.prunable(dt.date(2026, 3, 6)) == 5
    result = log.prune(dt.date(2026, 3, 6))
    assert (result.pruned, result.first, result.last, result.checkpoint) == (5, "A000001", "A000005", "A000011")
    check = log.get("A000011")
    assert (check["surface"], check["status"]) == ("system", "checkpoint")
    point = check["reply"]["checkpoint"]
    assert point["pruned"] == 5 and point["through_seq"] == 5 and point["before"] == "2026-03-06"
    assert log.get("A000005") is None and log.get("A000006") is not None
    assert log.verify().ok and log.verify().checked == 6  # A000006..A000010 + the checkpoint

    fill(log, 2, clock=clock)                             # life goes on: A000012 (Mar 11), A000013 (Mar 12)
    assert log.verify().ok

    second = log.prune(dt.date(2026, 3, 12))              # a second prune removes the first checkpoint too
    assert (second.pruned, second.first, second.last) == (7, "A000006", "A000012")
    assert log.get("A000014")["reply"]["checkpoint"]["pruned_total"] == 12
    assert log.verify().ok and [r["id"] for r in log.iter_all()] == ["A000013", "A000014"]

    out = tmp_path / "after-prune.jsonl"                   # an export after a prune still verifies on its own
    with open(out, "w", encoding="utf-8") as handle:
        log.export("jsonl", handle)
    with AuditLog(tmp_path / "restored.db") as restored:
        restored.load_export(out)
        assert restored.verify().ok

    tamper(db, "UPDATE advice SET question = 'changed' WHERE seq = 13")
    bad = log.verify()
    assert (bad.ok, bad.first_bad) == (False, "A000013")


@pytest.mark.parametrize("statement,first_bad,problem", [
    # the checkpoint's anchor edited: its own hash breaks
    ("UPDATE advice SET reply = json_set(reply, '$.checkpoint.anchor_hash', 'f00') WHERE seq = 11", "A000006",
     "prune anchor"),
    # the first row kept after the prune deleted
    ("DELETE FROM advice WHERE seq = 6", "A000007", "A000006 missing"),
    # the checkpoint itself deleted: nothing explains the missing start any more
    ("DELETE FROM advice WHERE seq = 11", "A000006", "A000001..A000005 missing"),
])
def test_tampering_around_a_checkpoint_is_detected(db, statement, first_bad, problem):
    clock = Clock()
    log = AuditLog(db, clock=clock)
    fill(log, 10, clock=clock)
    log.prune(dt.date(2026, 3, 6))
    tamper(db, statement)
    result = log.verify()
    assert (result.ok, result.first_bad) == (False, first_bad)
    assert problem in result.problem


def test_prune_refuses_a_broken_chain(log, db):
    fill(log, 5)
    tamper(db, "UPDATE advice SET question = 'x' WHERE seq = 2")
    with pytest.raises(AuditError, match="broken at A000002"):
        log.prune(dt.date(2100, 1, 1))
    assert log.count() == 5


def test_prune_with_nothing_old_writes_nothing(log):
    fill(log, 3)
    result = log.prune(dt.date(2000, 1, 1))
    assert (result.pruned, result.checkpoint) == (0, None)
    assert log.count() == 3


def test_prune_everything_then_append(db):
    clock = Clock()
    log = AuditLog(db, clock=clock)
    fill(log, 3, clock=clock)
    assert log.prune(dt.date(2100, 1, 1)).pruned == 3
    log.append(record(7))
    assert log.verify().ok and [r["id"] for r in log.iter_all()] == ["A000004", "A000005"]


# ------------------------------------------------------------------------------------------------ diff

REC_L4 = {"provider": "huaweicloud", "flavor": "pi5e.2xlarge.4", "gpu": "L4", "gpu_count": 1, "instances": 1,
          "price_per_hour": 10.0, "currency": "CNY", "fits": True}
REC_A100 = {"provider": "huaweicloud", "flavor": "p3.2xlarge.8", "gpu": "A100", "gpu_count": 1, "instances": 1,
            "price_per_hour": 30.0, "currency": "CNY", "fits": True}
OLD = {"status": "answer", "recommendations": [REC_L4, REC_A100], "memory": {"per_gpu_gib": 19.5},
       "checklist": [{"item": "oom", "status": "ok", "text": "19.5 of 24"},
                     {"item": "billing", "status": "warn", "text": "spot"}], "kb_version": "kb-1"}

DIFFS = [
    # identical replies: nothing to say
    ("same", OLD, []),
    # another flavor first
    ("top-pick", {**OLD, "recommendations": [REC_A100, REC_L4]}, ["top_pick"]),
    # a price went down
    ("price", {**OLD, "recommendations": [{**REC_L4, "price_per_hour": 8.0}, REC_A100]}, ["price"]),
    # the top pick no longer fits and a candidate was dropped
    ("fits+removed", {**OLD, "recommendations": [{**REC_L4, "fits": False}]}, ["fits", "removed"]),
    # a checklist item changed status
    ("checklist", {**OLD, "checklist": [{"item": "oom", "status": "warn", "text": "23 of 24"},
                                         {"item": "billing", "status": "warn", "text": "spot"}]}, ["checklist"]),
    # the memory estimate moved
    ("memory", {**OLD, "memory": {"per_gpu_gib": 21.0}}, ["memory"]),
    # a tiny rounding difference in memory is not news
    ("memory-noise", {**OLD, "memory": {"per_gpu_gib": 19.52}}, []),
    # now the bot would ask back instead of answering
    ("status", {**OLD, "status": "follow_up", "recommendations": [], "checklist": OLD["checklist"]},
     ["status", "top_pick", "removed", "removed"]),
    # more instances of the same flavor needed
    ("instances", {**OLD, "recommendations": [{**REC_L4, "instances": 2}, REC_A100]}, ["instances"]),
    # the knowledge base changed
    ("kb", {**OLD, "kb_version": "kb-2"}, ["kb"]),
]


@pytest.mark.parametrize("name,new,kinds", DIFFS, ids=[d[0] for d in DIFFS])
def test_diff_records(name, new, kinds):
    changes = diff_records(OLD, new)
    assert [c.kind for c in changes] == kinds
    assert all(isinstance(c, Change) and c.text and str(c) == c.text for c in changes)


def test_diff_records_wording():
    texts = [c.text for c in diff_records(OLD, {**OLD, "recommendations": [{**REC_L4, "price_per_hour": 8.0},
                                                                           REC_A100]})]
    assert texts == ["pi5e.2xlarge.4: price 10 -> 8 CNY/h (-20 %)."]
    top = diff_records(OLD, {**OLD, "recommendations": [REC_A100]})[0].text
    assert top == ("Top pick changed from 1 x pi5e.2xlarge.4 (1 x L4, huaweicloud) to "
                   "1 x p3.2xlarge.8 (1 x A100, huaweicloud).")
    assert AuditLog.diff_records(OLD, OLD) == []


# ------------------------------------------------------------------------------------------------ CLI


@pytest.fixture
def cli(db, monkeypatch):
    monkeypatch.setenv("ADVISOR_DB", str(db))
    runner = CliRunner()
    return lambda *args, **kw: runner.invoke(audit_cli, list(args), **kw)


def test_cli_list_show_verify(cli, db):
    clock = Clock()
    with AuditLog(db, clock=clock) as log:
        fill(log, 3, clock=clock)
    result = cli("list")
    assert result.exit_code == 0
    assert result.output.splitlines()[0].split() == ["ID", "WHEN", "(UTC)", "SURFACE", "USER", "STATUS", "TOP",
                                                     "PICK", "QUESTION"]
    assert "A000003" in result.output and "1 x pi5e.2xlarge.4" in result.output
    as_json = json.loads(cli("list", "--json", "--user", "U1").output)
    assert [r["id"] for r in as_json] == ["A000002"]
    assert [r["id"] for r in json.loads(cli("list", "--json", "--since", "2026-03-02").output)] == \
        ["A000003", "A000002"]
    shown = cli("show", "a2")
    assert shown.exit_code == 0 and "lora finetune qwen2.5 7b #1" in shown.output and "Recommendations" in shown.output
    assert json.loads(cli("show", "A000002", "--json").output)["hash"]
    ok = cli("verify")
    assert ok.exit_code == 0 and ok.output.startswith("ok: 3 record(s)")


@pytest.mark.parametrize("args,fragment,code", [
    (["show", "A000099"], "no audit record A000099", 3),              # unknown id: not found (3), says which exist
    (["show", "latest"], "is not an audit id", 2),                    # not an id at all
    (["list", "--since", "2026-13-01"], "write it as YYYY-MM-DD", 2),  # bad date: says the format
    (["prune", "--before", "March"], "write it as YYYY-MM-DD", 2),    # same for prune
    (["export", "--format", "xml"], "'xml' is not one of", 2),        # unknown format
])
def test_cli_usage_errors_exit_2_without_traceback(cli, db, args, fragment, code):
    with AuditLog(db) as log:
        fill(log, 1)
    result = cli(*args)
    assert result.exit_code == code
    assert fragment in result.output
    assert "Traceback" not in result.output


def test_cli_unreadable_database(tmp_path, monkeypatch):
    bad = tmp_path / "not-a-db.db"
    bad.write_text("hello")
    monkeypatch.setenv("ADVISOR_DB", str(bad))
    result = CliRunner().invoke(audit_cli, ["list"])
    assert result.exit_code == 4 and "ADVISOR_DB" in result.output and "Traceback" not in result.output


def test_cli_verify_fails_with_exit_1_naming_the_row(cli, db):
    with AuditLog(db) as log:
        fill(log, 4)
    tamper(db, "UPDATE advice SET question = 'x' WHERE seq = 3")
    result = cli("verify")
    assert result.exit_code == 1 and "FAILED at A000003" in result.output


def test_cli_export_and_prune(cli, db, tmp_path):
    clock = Clock()
    with AuditLog(db, clock=clock) as log:
        fill(log, 4, clock=clock)
    out = tmp_path / "x.csv"
    result = cli("export", "--format", "csv", "--output", str(out))
    assert result.exit_code == 0 and len(read_export(out)) == 4
    streamed = cli("export", "--format", "jsonl")
    assert [json.loads(line)["id"] for line in streamed.output.splitlines()] == [f"A00000{i}" for i in range(1, 5)]
    assert cli("prune", "--before", "2026-03-03", input="n\n").exit_code == 1       # declined: nothing happens
    assert cli("prune", "--before", "2000-01-01").output.startswith("Nothing to prune")
    done = cli("prune", "--before", "2026-03-03", "--yes")
    assert done.exit_code == 0 and "checkpoint A000005" in done.output
    assert cli("verify").exit_code == 0
