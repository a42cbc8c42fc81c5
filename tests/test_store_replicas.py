"""Two processes ("replicas") on one PostgreSQL database: appends form one chain, and an event delivered to both
(a Slack retry that reaches the other replica) is recorded once and queued once. Bounded: 2 x 60 events."""
from __future__ import annotations

import multiprocessing
import os
import time

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


def _eventually(read, timeout: float = 10.0):
    """read() once it is non-empty: the server drops a closed session's locks a moment after the close."""
    end = time.monotonic() + timeout
    while not (value := read()) and time.monotonic() < end:
        time.sleep(0.02)
    return value


def test_a_live_replicas_running_job_is_not_resumed_a_dead_ones_is(postgres_url):
    a, b = open_inbox(postgres_url), open_inbox(postgres_url)
    assert a.put("Ev1", "event", {"text": "hi"}) and a.put("Ev2", "event", {"text": "there"})
    assert a.start("Ev1").state == "running"
    assert b.start("Ev1") is None                         # replica a is alive and running it
    assert b.open_jobs() == [] and b.reclaim() == []      # a holds both: b, (re)starting or scanning, takes none
    assert b.put("Ev3", "event", {"text": "mine"}) and b.start("Ev3").attempts == 1
    a.close()                                              # replica a dies: the server drops its lock
    assert [j.id for j in _eventually(b.open_jobs)] == ["Ev1", "Ev2"]
    assert [(j.id, j.state) for j in b.reclaim()] == [("Ev1", "queued"), ("Ev2", "queued")]
    assert b.reclaim() == [] and b.open_jobs() == []       # b owns them now
    job = b.start("Ev1")
    assert (job.state, job.attempts) == ("running", 2)     # a's run counts as an attempt
    assert b.start("Ev2").attempts == 1
    b.close()


def test_survivors_split_a_dead_replicas_jobs_and_a_cut_off_replica_takes_a_new_lease(postgres_url):
    dead, b, c = open_inbox(postgres_url), open_inbox(postgres_url), open_inbox(postgres_url)
    for i in range(10):
        dead.put(f"Ev{i}", "event", {"text": str(i)})
    dead.start("Ev0")
    dead.close()
    _eventually(b.open_jobs)
    first, second = b.reclaim(4), c.reclaim(100)           # SKIP LOCKED: never the same job twice
    assert len(first) == 4 and len(second) == 6
    assert sorted(j.id for j in first + second) == [f"Ev{i}" for i in range(10)]
    assert b.heartbeat() and b.reclaim() == [] and c.reclaim() == []
    old = b.owner
    b._owner_conn.close()                                   # b's lease ends (as if the server had lost it)
    assert [j.id for j in _eventually(c.open_jobs)] == [j.id for j in first]
    assert b.heartbeat() is False and b.owner != old        # b notices, takes a new lease, re-owns its jobs
    assert c.reclaim() == [] and b.heartbeat()
    b.close(), c.close()


def test_the_lease_ends_when_the_server_loses_the_replicas_connection(postgres_url):
    """The lease connection tells the server to probe it (TCP keepalives, a user timeout), so a replica whose host
    vanished without closing its socket loses its lease in about 25 s instead of the OS default of hours; and a
    lease the server ended (here: the session terminated, as after failed probes) frees the jobs at once."""
    import psycopg
    from bot.store.pg_stores import LEASE_KEEPALIVES
    a, b = open_inbox(postgres_url), open_inbox(postgres_url)
    settings = {name: a._owner_conn.execute(f"SHOW {name}").fetchone()[0] for name in LEASE_KEEPALIVES}
    assert settings == {"tcp_keepalives_idle": "10", "tcp_keepalives_interval": "5", "tcp_keepalives_count": "3",
                        "tcp_user_timeout": "25000"}          # read back from the socket (0 where not applied)
    assert a.put("Ev1", "event", {"text": "hi"}) and a.start("Ev1")
    assert b.open_jobs() == []
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (a._owner_conn.info.backend_pid,))
    assert [j.id for j in _eventually(b.reclaim)] == ["Ev1"]
    a.close(), b.close()
