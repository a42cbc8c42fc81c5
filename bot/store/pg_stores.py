"""The PostgreSQL stores: the audit log, sessions, the durable inbox and the Slack app's small state, on one
database shared by every replica (`ADVISOR_DB=postgresql://...`).

Each class inherits the SQLite store's methods (the chain rules, queries, verify, export and prune of AuditLog;
all of SessionStore; most of Inbox) and overrides only what PostgreSQL says differently:
- audit writes lock the chain-head row (`audit_head ... FOR UPDATE`) where SQLite takes BEGIN IMMEDIATE, so
  appends from several replicas form one chain; the head's seq is the high-water mark (sqlite_sequence there);
- claims and inbox keys use INSERT ... ON CONFLICT DO NOTHING and count the rows inserted, so a retry that
  reaches another replica at the same moment waits on the unique index and then finds the key taken;
- the inbox orders by a serial column (no rowid) and drops `response_url` with jsonb's `-` (no json_remove).
"""
from __future__ import annotations

import datetime as dt
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator

from bot.store.audit import AuditLog
from bot.store.chain import AuditEntry, entry_of, iso_utc, utc_now, ZERO_HASH
from bot.store.inbox import Inbox, Job, _COLUMNS as _JOB_COLUMNS, _job, _team
from bot.store.pg import CONNECT_TIMEOUT_S, PgDatabase, QmarkConnection, _refused
from bot.store.sessions import DEFAULT_TTL_S, SessionStore
from bot.store.team_settings import TeamSettings

__all__ = ["PgAuditLog", "PgSessionStore", "PgInbox", "PgSlackState"]


class PgAuditLog(PgDatabase, AuditLog):
    """The audit log in PostgreSQL: one hash chain for all replicas, appends serialised on the chain head."""

    def __init__(self, url: str, *, clock: Callable[[], dt.datetime] = utc_now, timeout: float | None = None):
        self._clock = clock
        self._open(url)

    @contextmanager
    def _write(self) -> Iterator[QmarkConnection]:
        """A transaction holding the chain-head row: the next append (any replica) waits until it ends."""
        with PgDatabase._write(self) as conn:
            conn.execute("SELECT seq FROM audit_head FOR UPDATE")
            yield conn

    @staticmethod
    def _high_water(conn: QmarkConnection) -> int:
        return int(conn.execute("SELECT seq FROM audit_head").fetchone()[0])

    def _append_locked(self, conn: QmarkConnection, content: dict[str, Any],
                       head_if_empty: str = ZERO_HASH) -> AuditEntry:
        """Next seq and prev_hash come from the locked head (which prune leaves at the last pruned hash)."""
        last_seq, prev_hash = conn.execute("SELECT seq, hash FROM audit_head").fetchone()
        seq = int(last_seq) + 1
        row = self._insert(conn, seq, prev_hash, content)
        conn.execute("UPDATE audit_head SET seq = ?, hash = ?", (seq, row["hash"]))
        return entry_of(row)

    def claim_event(self, event_id: str) -> bool:
        """True for the first claimant of `event_id` on any replica (the unique key decides, no chain lock)."""
        if not event_id:
            return super().claim_event(event_id)         # the same error as SQLite's
        with PgDatabase._write(self) as conn:
            cursor = conn.execute("INSERT INTO slack_events (event_id, ts) VALUES (?, ?) ON CONFLICT DO NOTHING",
                                  (str(event_id), iso_utc(self._clock())))
            return cursor.rowcount == 1

    def load_export(self, path: Any) -> int:
        """As on SQLite, then the chain head moves to the last row loaded, so the next append continues it."""
        count = super().load_export(path)
        with self._write() as conn:
            last = conn.execute("SELECT seq, hash FROM advice ORDER BY seq DESC LIMIT 1").fetchone()
            if last is not None:
                conn.execute("UPDATE audit_head SET seq = ?, hash = ?", (int(last[0]), last[1]))
        return count


class PgSessionStore(PgDatabase, SessionStore):
    """Conversation state in PostgreSQL; SessionStore's SQL is portable, only the opening differs."""

    def __init__(self, url: str, ttl_seconds: float = DEFAULT_TTL_S, *,
                 clock: Callable[[], dt.datetime] = utc_now, timeout: float | None = None):
        if ttl_seconds <= 0:
            raise ValueError(f"ttl_seconds must be positive, not {ttl_seconds}")
        self.ttl = dt.timedelta(seconds=ttl_seconds)
        self._clock = clock
        self._open(url)


OWNER_LOCK_CLASS = 0x6770          # pg_advisory_lock(class, owner): held by each live inbox for its lifetime
# A job is abandoned when no session of this database holds its owner's lock (the replica died and the server
# closed its connection, or the keepalives below found its host gone). One hashed subquery over pg_locks.
_LIVE_OWNERS = ("SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted AND "
                f"classid = {OWNER_LOCK_CLASS} AND objsubid = 2 AND "
                "database = (SELECT oid FROM pg_database WHERE datname = current_database())")
_ABANDONED = f"(owner IS NULL OR owner NOT IN ({_LIVE_OWNERS}))"
# The owner lock is a lease: it lasts while the server can reach its connection. A killed process drops it at
# once (its socket closes); for a host that vanished without a word, the server's TCP keepalives on that
# connection (idle 10 s, then 3 probes 5 s apart, and at most 25 s of unacknowledged data) end it in ~25 s.
EDGE_TIMEOUT_S = 2.0               # the longest wait for a connection where Slack waits for the answer
LEASE_KEEPALIVES = {"tcp_keepalives_idle": "10", "tcp_keepalives_interval": "5", "tcp_keepalives_count": "3",
                    "tcp_user_timeout": "25000"}


class PgInbox(PgDatabase, Inbox):
    """The durable inbox in PostgreSQL: a job id or key claimed on one replica is seen by all.

    Replicas share the jobs, so "resume what is open" must not take a job another live replica holds (that
    would answer it twice). Each inbox holds a session advisory lock named by its random owner id on a connection
    of its own, and every job records the owner that accepted (or last claimed) it. A job whose owner's lock is
    gone was left by a dead replica: `reclaim` (run every few seconds by each replica's worker pool) takes such
    jobs with FOR UPDATE SKIP LOCKED, so two survivors never claim the same one, and `start` runs a job only when
    it is queued or abandoned, so a job runs on one live replica at a time.
    """

    def __init__(self, url: str, *, clock: Callable[[], dt.datetime] = utc_now, timeout: float | None = None):
        self._clock = clock
        self._open(url)
        self._owner_conn, self.owner = self._take_owner_lock()

    def _take_owner_lock(self) -> tuple[Any, int]:
        import secrets

        import psycopg
        try:
            conn = psycopg.connect(self.path.secret, autocommit=True, application_name="gpu-advisor inbox owner",
                                   connect_timeout=CONNECT_TIMEOUT_S, keepalives=1, keepalives_idle=10,
                                   keepalives_interval=5, keepalives_count=3)
            for name, value in LEASE_KEEPALIVES.items():    # the server's side: how soon it gives up on us
                conn.execute("SELECT set_config(%s, %s, false)", (name, value))
        except psycopg.Error as exc:                     # the server is away: the caller retries later
            raise _refused(self.path.secret, exc) from None
        for _ in range(100):
            owner = secrets.randbelow(2**31 - 1) + 1
            if conn.execute("SELECT pg_try_advisory_lock(%s, %s)", (OWNER_LOCK_CLASS, owner)).fetchone()[0]:
                return conn, owner
        conn.close()                                     # pragma: no cover - 100 collisions in 2**31
        raise RuntimeError("no free inbox owner id")

    def close(self) -> None:
        """Release the owner lock: this inbox's open jobs may now be resumed by another replica."""
        if not self._owner_conn.closed:
            self._owner_conn.close()

    def heartbeat(self) -> bool:
        """Check that the owner lock is still held; if its connection was lost, take a new owner id and re-own the
        jobs still recorded under the old one that nobody claimed meanwhile. False when the lock had been lost.

        Why: a replica cut off from the server for longer than the lease looks dead to the others, which may then
        claim its open jobs; once back, it must hold a lock again, or every job it accepts would look abandoned.
        """
        import psycopg
        try:
            self._owner_conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            pass
        old = self.owner
        self.close()
        self._owner_conn, self.owner = self._take_owner_lock()
        with self._write() as conn:
            conn.execute("UPDATE inbox SET owner = ? WHERE owner = ? AND state IN ('queued', 'running')",
                         (self.owner, old))
        return False

    def reclaim(self, limit: int = 100) -> list[Job]:
        """Claim up to `limit` jobs whose replica died (queued, or running when it died), oldest first: each
        becomes queued under this inbox's owner id. SKIP LOCKED: survivors scanning together split the jobs."""
        with self._write() as conn:
            rows = conn.execute(f"UPDATE inbox SET state = 'queued', owner = ?, updated = ? WHERE id IN ("
                                f"SELECT id FROM inbox WHERE state IN ('queued', 'running') AND {_ABANDONED} "
                                "ORDER BY n LIMIT ? FOR UPDATE SKIP LOCKED) "
                                f"RETURNING {', '.join(_JOB_COLUMNS)}, n",
                                (self.owner, self._now(), max(1, int(limit)))).fetchall()
        return [_job(r[:-1]) for r in sorted(rows, key=lambda r: r[-1])]

    def start(self, job_id: str) -> Job | None:
        """Mark a job running here; None when it is finished, unknown, or running on another live replica.
        A job running under this inbox's own owner id is one its worker pool hands back after the database was
        away mid-job (the pool never runs one job twice at once), so it may start again."""
        with self._write() as conn:
            cursor = conn.execute("UPDATE inbox SET state = 'running', attempts = attempts + 1, updated = ?, "
                                  f"owner = ? WHERE id = ? AND (state = 'queued' OR (state = 'running' AND "
                                  f"(owner = ? OR {_ABANDONED})))", (self._now(), self.owner, job_id, self.owner))
            if cursor.rowcount != 1:
                return None
            row = conn.execute(f"SELECT {', '.join(_JOB_COLUMNS)} FROM inbox WHERE id = ?", (job_id,)).fetchone()
        return _job(row)

    def put(self, job_id: str, kind: str, payload: dict[str, Any], keys: Iterable[str] = ()) -> bool:
        """Claim every key (sorted, so two replicas never deadlock), then the job; False when any was taken."""
        import json
        from bot.store.chain import to_json_value

        keys = sorted(k for k in dict.fromkeys([job_id, *keys]) if k)
        now = self._now()
        text = json.dumps(to_json_value(payload), ensure_ascii=False, separators=(",", ":"))
        with self._write(EDGE_TIMEOUT_S) as conn:       # the ack waits on this: a server away is known in seconds
            fresh = [conn.execute("INSERT INTO slack_events (event_id, ts) VALUES (?, ?) ON CONFLICT DO NOTHING",
                                  (k, now)).rowcount == 1 for k in keys]
            if not all(fresh):
                return False
            cursor = conn.execute("INSERT INTO inbox (id, kind, payload, state, received, updated, owner, team) "
                                  "VALUES (?, ?, ?, 'queued', ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                                  (job_id, kind, text, now, now, self.owner, _team(payload)))
            return cursor.rowcount == 1

    def probe(self, write: bool = False) -> dict[str, int]:
        """As Inbox.probe, each step waiting at most EDGE_TIMEOUT_S for a connection (/readyz reads the result)."""
        if write:
            with self._write(EDGE_TIMEOUT_S) as conn:
                self._probe_write(conn)
        with self._read(EDGE_TIMEOUT_S) as conn:
            rows = conn.execute("SELECT state, count(*) FROM inbox GROUP BY state").fetchall()
        return {state: n for state, n in rows}

    def oldest_open(self) -> str | None:
        """As Inbox.oldest_open, waiting at most EDGE_TIMEOUT_S for a connection."""
        with self._read(EDGE_TIMEOUT_S) as conn:
            row = conn.execute("SELECT min(received) FROM inbox WHERE state IN ('queued', 'running')").fetchone()
        return row[0] if row else None

    def open_jobs(self) -> list[Job]:
        """Open jobs whose replica is gone (queued or running there), not those a live replica holds."""
        with self._read() as conn:
            rows = conn.execute(f"SELECT {', '.join(_JOB_COLUMNS)} FROM inbox WHERE state IN ('queued', 'running') "
                                f"AND {_ABANDONED} ORDER BY received, n").fetchall()
        return [_job(r) for r in rows]

    def posted(self, job_id: str, parts: int, advice_id: str | None = None) -> None:
        self._update(job_id, "parts_posted = greatest(parts_posted, ?), advice_id = coalesce(?, advice_id)",
                     (parts, advice_id))

    def defer(self, job_id: str, not_before: str, why: str, advice_id: str | None = None, *,
              posted_unknown: bool = False) -> None:
        self._update(job_id, "state = 'queued', attempts = greatest(attempts - ?, 0), not_before = ?, error = ?, "
                             "advice_id = coalesce(?, advice_id)",
                     (0 if posted_unknown else 1, not_before, why[:2000], advice_id))

    def finish(self, job_id: str, *, advice_id: str | None, delivered: bool, error: str | None = None) -> None:
        self._update(job_id, "state = 'done', advice_id = coalesce(?, advice_id), delivered = ?, error = ?, "
                             "payload = (payload::jsonb - 'response_url')::text",
                     (advice_id, int(delivered), error and error[:2000]))

    def fail(self, job_id: str, error: str, *, delivered: bool) -> None:
        self._update(job_id, "state = 'failed', delivered = ?, error = ?, "
                             "payload = (payload::jsonb - 'response_url')::text", (int(delivered), error[:2000]))


class PgSlackState(TeamSettings, PgDatabase):
    """Feedback, App Home preferences and answered threads (bot/store/slack_state.py's methods) in PostgreSQL."""

    _PREFS = ("provider", "currency")

    def __init__(self, url: str, timeout: float | None = None):
        self._open(url)

    def add_feedback(self, advice_id: str, user: str, team: str, helpful: bool) -> None:
        with self._write() as conn:
            conn.execute('INSERT INTO feedback (advice_id, "user", team, helpful, ts) VALUES (?, ?, ?, ?, ?) '
                         'ON CONFLICT (advice_id, "user") DO UPDATE SET team = excluded.team, '
                         "helpful = excluded.helpful, ts = excluded.ts",
                         (advice_id, user, team, int(helpful), iso_utc(utc_now())))

    def feedback(self) -> list[dict[str, Any]]:
        with self._read() as conn:
            cursor = conn.execute('SELECT advice_id, "user", team, helpful, ts FROM feedback')
            return [dict(zip(("advice_id", "user", "team", "helpful", "ts"), r)) for r in cursor.fetchall()]

    def prefs(self, team: str, user: str) -> dict[str, Any]:
        with self._read() as conn:
            row = conn.execute('SELECT provider, currency FROM slack_prefs WHERE team = ? AND "user" = ?',
                               (team, user)).fetchone()
        return {k: v for k, v in zip(self._PREFS, row) if v} if row else {}

    def set_pref(self, team: str, user: str, **values: str | None) -> None:
        """Set (a value) or clear (None) one or more of provider, currency."""
        unknown = set(values) - set(self._PREFS)
        if unknown:
            raise TypeError(f"unknown preference(s): {', '.join(sorted(unknown))}")
        current = self.prefs(team, user)
        row = {**{k: current.get(k) for k in self._PREFS}, **values}
        with self._write() as conn:
            conn.execute('INSERT INTO slack_prefs (team, "user", provider, currency, ts) VALUES (?, ?, ?, ?, ?) '
                         'ON CONFLICT (team, "user") DO UPDATE SET provider = excluded.provider, '
                         "currency = excluded.currency, ts = excluded.ts",
                         (team, user, row["provider"], row["currency"], iso_utc(utc_now())))

    def join_thread(self, channel: str, thread_ts: str) -> None:
        with self._write() as conn:
            conn.execute("INSERT INTO slack_threads (channel, thread_ts, ts) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                         (channel, thread_ts, iso_utc(utc_now())))

    def in_thread(self, channel: str, thread_ts: str) -> bool:
        with self._read() as conn:
            return conn.execute("SELECT 1 FROM slack_threads WHERE channel = ? AND thread_ts = ?",
                                (channel, thread_ts)).fetchone() is not None
