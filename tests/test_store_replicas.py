"""Two processes ("replicas") on one PostgreSQL database: appends form one chain, and an event delivered to both
(a Slack retry that reaches the other replica) is recorded once and queued once. Bounded: 2 x 60 events."""
from __future__ import annotations

import multiprocessing
import os

from click.testing import CliRunner

from bot.store.backend import open_audit, open_inbox
from bot.surfaces.cli.main import main

EVENTS = 60
OVERLAP = 30          # replica 1 gets events 0..59, replica 2 events 30..89: 30 arrive at both


def _replica(url: str, first: int, barrier, out) -> None:
    audit, inbox = open_audit(url), open_inbox(url)
    barrier.wait(timeout=60)
    queued = recorded = 0
    for i in range(first, first + EVENTS):
        queued += inbox.put(f"Ev{i}", "event", {"text": f"question {i}"}, keys=[f"msg:C1:{i}.0"])
        entry = audit.append({"surface": "dm", "team": "T1", "user": f"U{i % 7}", "status": "answer",
                              "question": f"question {i}", "event_id": f"Ev{i}", "reply": {"pid": os.getpid()}})
        recorded += not entry.duplicate
    out.put((queued, recorded))


def test_two_replicas_one_chain_each_event_once(postgres_url):
    open_audit(postgres_url)                       # migrate once before the race (replicas would wait on the lock)
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_replica, args=(postgres_url, start, barrier, out)) for start in (0, EVENTS - OVERLAP)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    results = [out.get(timeout=5) for _ in procs]
    unique = 2 * EVENTS - OVERLAP
    assert sum(q for q, _ in results) == unique and sum(r for _, r in results) == unique
    log = open_audit(postgres_url)
    assert log.count() == unique
    assert sorted(r["event_id"] for r in log.iter_all()) == sorted(f"Ev{i}" for i in range(unique))
    assert len({r["reply"]["pid"] for r in log.iter_all()}) == 2        # both replicas wrote into the one chain
    assert open_inbox(postgres_url).counts() == {"queued": unique}
    res = CliRunner().invoke(main, ["audit", "verify"], env={"ADVISOR_DB": postgres_url}, catch_exceptions=False)
    assert res.exit_code == 0 and f"ok: {unique} record(s) checked, chain intact" in res.output


def test_a_live_replicas_running_job_is_not_resumed_a_dead_ones_is(postgres_url):
    a, b = open_inbox(postgres_url), open_inbox(postgres_url)
    assert a.put("Ev1", "event", {"text": "hi"}) and a.put("Ev2", "event", {"text": "there"})
    assert a.start("Ev1").state == "running"
    assert b.start("Ev1") is None                         # replica a is alive and running it
    assert [j.id for j in b.open_jobs()] == ["Ev2"]       # b, (re)starting, resumes only the queued one
    assert b.start("Ev2").attempts == 1 and a.start("Ev2") is None
    a.close()                                              # replica a dies: the server drops its lock
    assert [j.id for j in b.open_jobs()] == ["Ev1"]
    job = b.start("Ev1")
    assert (job.state, job.attempts) == ("running", 2)
    b.close()
