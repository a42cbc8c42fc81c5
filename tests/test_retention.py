"""Retention that deletes (issue 34): after `audit prune` (whole log or `--team`), no row of any table holds the
text of a pruned question, and on SQLite neither do the database file nor its write-ahead log; what is kept is
untouched and the chain still verifies. Before: after pruning 1,120 advice rows, 1,090 inbox rows still held the
questions' text, and sessions and event ids were never deleted.

The property runs over generated workspaces of old and new questions (each question reaches the audit log, the
inbox and a session, as a Slack turn does), on SQLite, and once on PostgreSQL (searching every table there)."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.store.audit import AuditLog
from bot.store.backend import open_audit, open_inbox, open_sessions
from bot.store.inbox import Inbox
from bot.store.sessions import session_key
from bot.surfaces.cli.main import main

UTC = dt.timezone.utc
TODAY = dt.datetime.now(UTC).replace(microsecond=0)
CUTOFF = (TODAY - dt.timedelta(days=30)).date()


class Clock:
    def __init__(self) -> None:
        self.now = TODAY

    def __call__(self) -> dt.datetime:
        return self.now


def _question(team: str, n: int, old: bool) -> str:
    return f"{'old' if old else 'new'}-{team}-{n}: lora 微调 qwen2.5 7b, budget q{team}{n}zz"


def _ask(target, clock: Clock, team: str, n: int, old: bool) -> str:
    """One Slack turn's traces, dated 90 days or 1 day ago: the audit row, the finished inbox job, the session."""
    text = _question(team, n, old)
    clock.now = TODAY - dt.timedelta(days=90 if old else 1)
    channel, user = f"D{team}{n}", f"U{n}"
    audit = open_audit(target, clock=clock)
    audit.append({"surface": "dm", "team": team, "channel": channel, "user": user, "session": f"s-{team}{n}",
                  "question": text, "status": "answer", "intent": "finetune", "slots": {}, "recommendations": [],
                  "rule_trace": [], "kb_version": "kb", "reply": {"status": "answer", "text": f"Pick for {text}"},
                  "event_id": f"Ev{team}{n}{int(old)}"})
    inbox = open_inbox(target, clock=clock)
    job = f"Ev{team}{n}{int(old)}"
    inbox.put(job, "dm", {"task": "answer", "text": text, "team": team, "place": {"channel": channel}},
              [f"msg:{channel}:{n}"])
    inbox.start(job)
    inbox.finish(job, advice_id=None, delivered=True)
    open_sessions(target, clock=clock, ttl_seconds=400 * 86400).save(
        session_key("dm", team, channel, None, user), {"slots": {"model": "qwen2.5-7b"}, "last": text})
    inbox.close()
    return text


def _cells(rows) -> str:
    return "\n".join(str(cell) for row in rows for cell in row)


def _sqlite_text(path: Path) -> tuple[str, bytes]:
    """Every cell of every table, and the raw bytes of the file and its write-ahead log."""
    import sqlite3
    conn = sqlite3.connect(str(path))
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        cells = _cells(row for t in tables for row in conn.execute(f'SELECT * FROM "{t}"'))
    finally:
        conn.close()
    raw = b"".join(Path(str(path) + s).read_bytes() for s in ("", "-wal") if Path(str(path) + s).exists())
    return cells, raw


def _prune(db: str, *args: str) -> str:
    result = CliRunner().invoke(main, ["audit", "prune", *args, "--yes"], env={"ADVISOR_DB": db})
    assert result.exit_code == 0, result.output
    return result.output


WORKSPACES = st.lists(st.tuples(st.sampled_from(["T1", "T2", "T3"]), st.booleans()), min_size=1, max_size=8)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(asked=WORKSPACES, per_team=st.booleans())
def test_after_prune_no_table_and_no_byte_of_the_file_holds_a_pruned_question(tmp_path_factory, asked, per_team):
    path = tmp_path_factory.mktemp("retention") / "advisor.db"
    clock = Clock()
    asked = sorted(asked, key=lambda a: not a[1])                          # the log is in time order: old first
    texts = [(team, old, _ask(path, clock, team, n, old)) for n, (team, old) in enumerate(asked)]
    if per_team:
        _prune(str(path), "--team", "T1", "--before", CUTOFF.isoformat())
        gone = [t for team, old, t in texts if old and team == "T1"]
    else:
        _prune(str(path), "--before", CUTOFF.isoformat())
        gone = [t for team, old, t in texts if old]
    kept = [t for _, _, t in texts if t not in gone]
    cells, raw = _sqlite_text(path)
    assert [t for t in gone if t in cells] == []
    assert [t for t in gone if t.encode() in raw] == []                     # not in a free page, not in the WAL
    assert [t for t in kept if t not in cells] == []                        # what is kept is untouched
    with AuditLog(path) as log:
        assert log.verify().ok


def test_prune_says_what_it_removed_beside_the_audit_log(tmp_path):
    path = tmp_path / "advisor.db"
    clock = Clock()
    for n in range(3):
        _ask(path, clock, "T1", n, old=True)
    _ask(path, clock, "T1", 9, old=False)
    out = _prune(str(path), "--before", CUTOFF.isoformat())
    assert "Pruned 3 record(s)" in out
    assert "3 finished Slack job(s), 3 conversation session(s), 6 event id(s)" in out      # job id + message key
    out = _prune(str(path), "--before", CUTOFF.isoformat())
    assert out.startswith("Nothing to prune") and "Also removed" not in out


def test_a_finished_jobs_question_is_emptied_after_the_window_an_open_one_is_kept(tmp_path):
    clock = Clock()
    inbox = Inbox(tmp_path / "advisor.db", clock=clock)
    for job, age_h, finish in (("old-done", 30, True),      # finished 30 h ago: emptied at 24 h
                               ("new-done", 2, True),       # finished 2 h ago: kept
                               ("old-open", 30, False)):    # never finished: still to be answered, kept
        clock.now = TODAY - dt.timedelta(hours=age_h)
        inbox.put(job, "dm", {"text": f"question {job}", "team": "T1"})
        if finish:
            inbox.finish(job, advice_id="A000001", delivered=True)
    cutoff = (TODAY - dt.timedelta(hours=24)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert inbox.housekeep(cutoff, cutoff) == (1, 2)                    # ids of both 30-hour-old jobs dropped
    assert inbox.get("old-done").payload == {} and inbox.get("old-done").delivered is True
    assert inbox.get("new-done").payload["text"] == "question new-done"
    assert inbox.get("old-open").payload["text"] == "question old-open"
    assert inbox.housekeep(cutoff, cutoff) == (0, 0)


def test_postgresql_prune_leaves_no_table_holding_a_pruned_question(postgres_url):
    import psycopg
    clock = Clock()
    texts = [(team, old, _ask(postgres_url, clock, team, n, old))
             for n, (team, old) in enumerate([("T1", True), ("T2", True), ("T1", False), ("T1", True)])]
    _prune(postgres_url, "--team", "T1", "--before", CUTOFF.isoformat())
    with psycopg.connect(postgres_url) as conn:
        tables = [r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables WHERE "
                                             "table_schema = 'public' AND table_type = 'BASE TABLE'")]
        cells = _cells(row for t in tables for row in conn.execute(f'SELECT * FROM "{t}"').fetchall())
    gone = [t for team, old, t in texts if old and team == "T1"]
    assert len(gone) == 2 and [t for t in gone if t in cells] == []
    assert [t for team, old, t in texts if t not in gone and t not in cells] == []
    assert open_audit(postgres_url).verify().ok
    assert json.loads(json.dumps(tables))                                 # every table was searched: non-empty


def test_fifty_pruned_questions_leave_no_byte_in_the_file(tmp_path):
    """Deleted rows stay readable in free pages unless SQLite overwrites them: with secure_delete off (the default
    of many SQLite builds) and no compaction, 25 of 40 questions of a whole-log prune and 20 of 20 of a per-team
    prune stayed in the file's bytes. The store turns secure_delete on and the prune compacts the file (VACUUM);
    each alone removed all of them in that measurement."""
    path = tmp_path / "advisor.db"
    clock = Clock()
    gone = [_ask(path, clock, "T1", n, old=True) for n in range(50)]
    kept = _ask(path, clock, "T1", 99, old=False)
    _prune(str(path), "--before", CUTOFF.isoformat())
    cells, raw = _sqlite_text(path)
    assert [t for t in gone if t.encode() in raw] == [] and kept in cells
