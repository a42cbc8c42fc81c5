"""The worker pool's scanner (bot/surfaces/slack/worker.py): it renews the replica's lease and claims a dead
replica's jobs only as far as its workers have room, rescanning soon while a backlog remains, so survivors share
the backlog instead of one taking it all. A stand-in inbox; tests/test_store_replicas.py has the PostgreSQL side."""
from __future__ import annotations

import logging
import threading
import time

from bot.store.inbox import Job
from bot.surfaces.slack.worker import WorkerPool


class OrphanInbox:
    """Jobs a dead replica left (`orphans`), handed out by reclaim(limit) as PgInbox does."""

    def __init__(self, orphans: int, lease_ok: bool = True):
        self.orphans = [f"Ev{i}" for i in range(orphans)]
        self.lease_ok, self.beats, self.limits = lease_ok, 0, []

    def heartbeat(self) -> bool:
        self.beats += 1
        return self.lease_ok

    def reclaim(self, limit: int = 100) -> list[Job]:
        self.limits.append(limit)
        taken, self.orphans = self.orphans[:limit], self.orphans[limit:]
        return [Job(job_id, "event") for job_id in taken]

    def open_jobs(self) -> list[Job]:
        return []

    def probe(self, write: bool = False) -> dict[str, int]:      # the database watch's check: always up here
        return {}

    def start(self, job_id: str) -> Job:
        return Job(job_id, "event", state="running", attempts=1)


def test_a_scan_claims_only_what_the_workers_have_room_for():
    inbox = OrphanInbox(13)
    pool = WorkerPool(inbox, lambda job: None, lambda job, exc: False, size=2)     # not started: nothing runs
    assert pool.scan() is True and pool.depth() == 8           # 4 per worker: the room filled, more may wait
    assert pool.scan() is True and pool.depth() == 10          # queue full: still one per worker
    assert pool.scan() is True and pool.scan() is False        # 2 more, then the last one: the backlog is gone
    assert inbox.limits == [8, 2, 2, 2] and inbox.orphans == [] and pool.depth() == 13 and inbox.beats == 4


def test_a_lost_lease_is_logged_and_the_scanner_runs_the_claimed_jobs(caplog):
    inbox = OrphanInbox(0, lease_ok=False)
    done: list[str] = []
    all_done = threading.Event()

    def handle(job: Job) -> None:
        done.append(job.id)
        if len(done) == 30:
            all_done.set()

    pool = WorkerPool(inbox, handle, lambda job, exc: False, size=2, scan_s=2)
    with caplog.at_level(logging.INFO, logger="gpu_advisor.slack"):
        pool.start()
        inbox.orphans = [f"Ev{i}" for i in range(30)]            # a replica dies with 30 jobs acknowledged
        started = time.monotonic()
        assert all_done.wait(10), done
        pool.stop()
    assert sorted(done) == sorted(f"Ev{i}" for i in range(30))  # each once
    # the first scan after 2 s takes 8 (room), the rest follow 0.2 s apart; at one scan per 2 s it would be 8+ s
    assert time.monotonic() - started < 5
    assert any("dropped this replica's lease" in r.message for r in caplog.records)
    assert any("claimed 8 Slack job(s) left by a stopped replica" in r.getMessage() for r in caplog.records)


def test_a_job_put_off_by_a_rate_limit_waits_for_its_not_before_time_across_a_restart(tmp_path):
    """Inbox.defer keeps the not-before time in the inbox and un-counts the attempt (not a failure); a pool
    started later (a restart) runs the job only once that time has come, not at once."""
    import datetime as dt

    from bot.store.chain import iso_utc
    from bot.store.inbox import Inbox
    inbox = Inbox(tmp_path / "advisor.db")
    inbox.put("Ev1", "dm", {"text": "hi"})
    assert inbox.start("Ev1").attempts == 1
    not_before = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=2)
    inbox.defer("Ev1", iso_utc(not_before), "chat.postMessage to D1 is rate limited for 2.0 s")
    job = inbox.get("Ev1")
    assert (job.state, job.attempts, job.not_before) == ("queued", 0, iso_utc(not_before))
    ran = threading.Event()
    pool = WorkerPool(inbox, lambda job: ran.set(), lambda job, exc: False, size=1)
    pool.start()
    try:
        assert not ran.wait(0.5)                        # the time has not come: not run at start
        assert ran.wait(5)                              # and then it is
    finally:
        pool.stop()
