"""The spool (bot/store/spool.py): Slack requests kept on the local disk while the database is away, moved into
the inbox when it is back. What must hold: oldest first, nothing lost when the database fails again half-way
through a drain, nothing answered twice when a job is moved in twice, a damaged file set aside (not a crash),
and a folder that cannot be written is an OSError (the edge then refuses the request instead of acking it)."""
from __future__ import annotations

import stat

import pytest

from bot.store.faults import StorageError
from bot.store.inbox import Inbox
from bot.store.spool import Spool


def test_jobs_come_back_oldest_first_with_what_was_written(tmp_path):
    spool = Spool(tmp_path / "spool")
    for n in range(5):
        spool.put(f"Ev{n}", "dm", {"text": f"question {n}", "place": {"channel": "D1"}}, [f"msg:D1:{n}"])
    pending = spool.pending()
    assert [j.job_id for j in pending] == [f"Ev{n}" for n in range(5)] and spool.count() == 5
    assert pending[3].payload == {"text": "question 3", "place": {"channel": "D1"}} and pending[3].keys == ("msg:D1:3",)
    assert stat.S_IMODE((tmp_path / "spool").stat().st_mode) == 0o700
    assert stat.S_IMODE(pending[0].path.stat().st_mode) == 0o600             # they hold users' questions


def test_a_drain_that_meets_the_outage_again_keeps_the_rest(tmp_path):
    spool, inbox = Spool(tmp_path / "spool"), Inbox(tmp_path / "advisor.db")
    for n in range(4):
        spool.put(f"Ev{n}", "dm", {"text": "hi"}, [f"msg:D1:{n}"])
    calls, queued = [], []

    def flaky_put(*args):                       # the database fails again at the third job
        calls.append(args[0])
        if len(calls) == 3:
            raise StorageError("the database is away again")
        return inbox.put(*args)
    with pytest.raises(StorageError):
        spool.drain(flaky_put, queued.append)
    assert queued == ["Ev0", "Ev1"] and [j.job_id for j in spool.pending()] == ["Ev2", "Ev3"]
    assert spool.drain(inbox.put, queued.append) == 2
    assert queued == ["Ev0", "Ev1", "Ev2", "Ev3"] and spool.count() == 0
    assert inbox.counts() == {"queued": 4}


def test_a_job_already_in_the_inbox_is_deleted_not_queued_again(tmp_path):
    """A crash between 'recorded' and 'file deleted', or Slack's retry recorded meanwhile: one job, one answer."""
    spool, inbox = Spool(tmp_path / "spool"), Inbox(tmp_path / "advisor.db")
    assert inbox.put("Ev1", "dm", {"text": "hi"}, ["msg:D1:1"])
    spool.put("Ev1", "dm", {"text": "hi"}, ["msg:D1:1"])                   # the same event id
    spool.put("Ev1-retry", "dm", {"text": "hi"}, ["msg:D1:1"])             # the same message, another id
    queued: list[str] = []
    assert spool.drain(inbox.put, queued.append) == 2
    assert queued == [] and spool.count() == 0 and inbox.counts() == {"queued": 1}


def test_a_damaged_file_is_set_aside_and_the_others_drain(tmp_path):
    spool = Spool(tmp_path / "spool")
    spool.put("Ev1", "dm", {"text": "hi"})
    (tmp_path / "spool" / "00000000000000000000-torn.json").write_text('{"id": "Ev0", "kind"')
    assert [j.job_id for j in spool.pending()] == ["Ev1"]
    assert [p.name for p in (tmp_path / "spool").glob("*.bad")] == ["00000000000000000000-torn.bad"]


def test_a_folder_that_cannot_be_written_is_an_oserror_and_leaves_nothing(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(OSError):
        Spool(tmp_path / "file" / "spool").put("Ev1", "dm", {"text": "hi"})
    assert Spool(tmp_path / "file" / "spool").count() == 0
