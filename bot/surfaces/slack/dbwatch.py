"""Knowing whether the database takes writes, without making anyone wait for it: one background thread probes
it, /readyz reads what it found, and when the database comes back the requests kept meanwhile are recorded and
the jobs that stopped half-way are run again.

Why: during a 15 s PostgreSQL outage the Slack edge apologised for questions it could have answered a few seconds
later, each worker printed a traceback per job, and /healthz hung 5 s on a query. Now:
- a write that fails (the edge's, a worker's) calls `down(error)`: one log line for the whole outage, and the edge
  keeps new requests in the local spool (bot/store/spool.py) instead of trying the database per request;
- a worker whose job met the outage hands it back (`park`): it is run again once the database is back, not
  counted as a failure, never apologised for;
- while down, the thread retries a real write (`Inbox.probe(write=True)`) with backoff (0.25 s doubling to 2 s),
  so a full disk that was cleared or a server that restarted is noticed within 2 s; while up it refreshes the
  job counts every `up_every` seconds with a read;
- `snapshot()` is what /readyz and /metrics show: no database call in the request, so it answers at once.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

from bot.store.faults import StorageError

log = logging.getLogger("gpu_advisor.slack")

FIRST_WAIT_S = 0.25
MAX_WAIT_S = 2.0
UP_EVERY_S = 2.0
HOUSEKEEPING_S = 600.0          # retention while serving (bot/store/retention.py), and once at start


class DatabaseWatch:
    """The database's state as last seen, the jobs waiting for it, and the thread that brings them back."""

    def __init__(self, inbox: Any, spool: Any, submit: Callable[[str], None], *, up_every: float = UP_EVERY_S,
                 first_wait: float = FIRST_WAIT_S, max_wait: float = MAX_WAIT_S,
                 housekeeping: Callable[[], None] | None = None, housekeeping_s: float = HOUSEKEEPING_S):
        self.inbox, self.spool, self.submit = inbox, spool, submit
        self.housekeeping, self.housekeeping_s = housekeeping, housekeeping_s
        self._housekept = float("-inf")
        self.up_every, self.first_wait, self.max_wait = up_every, first_wait, max(first_wait, max_wait)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._down_since: float | None = None
        self._error: str | None = None
        self._parked: dict[str, None] = {}            # job ids, in the order they were handed back
        self._counts: dict[str, int] = {}
        self._oldest: float | None = None             # epoch seconds of the oldest open job, as last read
        self._thread: threading.Thread | None = None

    # ----- what the edge and the workers tell it --------------------------------------------------------------
    def is_up(self) -> bool:
        return self._down_since is None

    def down(self, error: BaseException) -> None:
        """A write failed: the database is away until a probe succeeds. Logged once per outage."""
        text = error.render() if isinstance(error, StorageError) else f"{type(error).__name__}: {error}"
        with self._lock:
            first = self._down_since is None
            if first:
                self._down_since, self._error = time.monotonic(), text
        if first:
            log.error("the database cannot be written: %s Slack requests are kept in %s and answered when it is "
                      "back (retrying every %.2g-%.2g s).", text, self._spool_name(), self.first_wait, self.max_wait)
            self._wake.set()

    def park(self, job_id: str, error: BaseException) -> None:
        """A job met the outage: run it again once the database is back (not an attempt that failed)."""
        self.down(error)
        with self._lock:
            self._parked[job_id] = None

    def hold(self, job_id: str) -> None:
        """A job taken while the database is known to be away: run it when it is back (at once if it is)."""
        with self._lock:
            away = self._down_since is not None
            if away:
                self._parked[job_id] = None
        if not away:
            self.submit(job_id)

    def snapshot(self) -> dict[str, Any]:
        """The state for /readyz: database up or down (since when, why), jobs per state, what waits for it."""
        with self._lock:
            since, error, parked, counts = self._down_since, self._error, len(self._parked), dict(self._counts)
        facts: dict[str, Any] = {"database": "up" if since is None else "down", "inbox": counts,
                                 "oldest_job_s": round(self.oldest_age(), 1)}
        if since is not None:
            facts.update(storage=error, down_s=round(time.monotonic() - since, 1))
        kept = self._spooled()
        if kept or parked:
            facts.update(spooled=kept, parked=parked)
        return facts

    # ----- the thread ------------------------------------------------------------------------------------------
    def start(self) -> None:
        self._refresh()
        self._thread = threading.Thread(target=self._loop, name="database-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()

    def _loop(self) -> None:
        wait, tries = self.up_every, 0
        while not self._stopping.is_set():
            self._wake.wait(wait)
            self._wake.clear()
            if self._stopping.is_set():
                return
            if (self.is_up() and self._refresh()) or self._recover():
                wait, tries = self.up_every, 0
            else:                                       # backoff: 0.25, 0.5, 1, 2, 2, ... seconds
                wait, tries = min(self.max_wait, self.first_wait * 2 ** tries), tries + 1

    def backlog(self) -> float:
        """Jobs not finished, as last read (queued and running), plus requests kept in the spool: /metrics."""
        with self._lock:
            counts = dict(self._counts)
        return float(counts.get("queued", 0) + counts.get("running", 0) + self._spooled())

    def oldest_age(self) -> float:
        """Seconds since the oldest unfinished job was received (0 when none), as last read: it keeps growing
        while the database is away, which is what an alert wants."""
        with self._lock:
            oldest = self._oldest
        return 0.0 if oldest is None else max(0.0, time.time() - oldest)

    def _read_oldest(self) -> None:
        read = getattr(self.inbox, "oldest_open", None)
        iso = read() if read is not None else None
        with self._lock:
            self._oldest = _epoch(iso) if iso else None

    def _refresh(self) -> bool:
        """Read the job counts (and record any requests kept in the spool); False when the database failed."""
        try:
            counts = self.inbox.probe()
            self._read_oldest()
            if self._spooled():
                self._drain()
            if self.housekeeping is not None and time.monotonic() - self._housekept >= self.housekeeping_s:
                self._housekept = time.monotonic()
                self._housekeep()
        except StorageError as exc:
            self.down(exc)
            return False
        with self._lock:
            self._counts = counts
        return True

    def _housekeep(self) -> None:
        """Retention while serving; a defect in it is logged, and the watch goes on (the database may be fine)."""
        try:
            self.housekeeping()
        except StorageError:
            raise
        except Exception:                               # noqa: BLE001 - never let retention stop the watch
            log.warning("retention while serving failed; it is tried again in %.0f s", self.housekeeping_s,
                        exc_info=True)

    def _recover(self) -> bool:
        """One write probe; when it succeeds, renew the replica's lease, record the kept requests and run the
        parked jobs again. False while the database is still away."""
        try:
            counts = self.inbox.probe(write=True)
            self._read_oldest()
            self.inbox.heartbeat()                      # PostgreSQL: a new lease if the outage ended the old one
            kept = self._drain()
        except StorageError as exc:
            with self._lock:
                self._error = exc.render()
            return False
        with self._lock:
            parked, self._parked = list(self._parked), {}
            since, self._down_since, self._error = self._down_since, None, None
            self._counts = counts
        for job_id in parked:
            self.submit(job_id)
        log.warning("the database is back after %.1f s: %d kept request(s) recorded, %d job(s) resumed",
                    time.monotonic() - (since or time.monotonic()), kept, len(parked))
        return True

    def _drain(self) -> int:
        if self.spool is None:
            return 0
        return self.spool.drain(self.inbox.put, self.submit)

    def _spooled(self) -> int:
        try:
            return self.spool.count() if self.spool is not None else 0
        except OSError:
            return 0

    def _spool_name(self) -> str:
        return str(getattr(self.spool, "folder", "memory")) if self.spool is not None else "the process (no spool)"


def _epoch(iso: str) -> float | None:
    """Seconds since 1970 of the inbox's ISO-8601 UTC stamp; None when unreadable."""
    import datetime as dt
    try:
        moment = dt.datetime.fromisoformat(iso)
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)).timestamp()
