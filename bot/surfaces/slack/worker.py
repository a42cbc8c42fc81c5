"""A bounded pool of worker threads that run the Slack jobs of the durable inbox (bot/store/inbox.py).

Why a pool of our own rather than Bolt's listener threads: acknowledging a request must never wait behind
answer work. The HTTP (or Socket Mode) thread only writes the job and answers; `size` workers run the turns and
post the replies, so a slow Slack API or a burst of questions lengthens the queue, not the acks. The in-memory
queue holds job ids only; the jobs themselves are in SQLite, so a crash loses nothing that was acknowledged.

Failures: an attempt that raises is retried after a short, growing delay; after `max_attempts` the job ends
`failed`, `give_up(job, error)` tells the user (an apology) and the error is logged. A job that was running when
the process died counts that run as an attempt, so a question that crashes the process cannot loop forever.

Replicas (PostgreSQL): every `scan_s` seconds a scanner thread renews this replica's lease on its jobs
(`inbox.heartbeat()`) and claims jobs a dead replica left (`inbox.reclaim()`), as many as the workers have room
for, so survivors answer them without waiting for a replacement and share them out. On SQLite both are no-ops.

The database away (an outage, a full disk): a job whose attempt meets a StorageError is handed to the database
watch (bot/surfaces/slack/dbwatch.py) and run again when the database is back; it is not a failed attempt, so
nobody is apologised to for a question that can still be answered, and the log says it once, not per job.

Slack's rate limits: a job whose post must wait (RateLimited: a 429, or the channel's Retry-After still running)
goes back to the inbox with its not-before time, and the worker takes the next job; a timer queues it again when
the wait is over (also after a restart, or on the replica that claims it). Other channels are not held up.
"""
from __future__ import annotations

import datetime as dt
import logging
import queue
import threading
import time
from typing import Any, Callable

from bot.store.faults import StorageError
from bot.store.inbox import Inbox, Job
from bot.surfaces.slack.dbwatch import DatabaseWatch
from bot.surfaces.slack.throttle import RateLimited, SlackAway

log = logging.getLogger("gpu_advisor.slack")

DEFAULT_WORKERS = 4
DEFAULT_ATTEMPTS = 3
DEFAULT_SCAN_S = 5.0
DEFAULT_SLACK_WAIT_S = 3600.0   # how long a reply waits for an unreachable Slack before it is recorded as not delivered
BACKLOG_SCAN_S = 0.2        # the next scan when the last one filled the workers' room: a dead replica's backlog


class WorkerPool:
    """`submit(job_id)` after the inbox holds the job; `start()` resumes what a previous process left open."""

    def __init__(self, inbox: Inbox, handle: Callable[[Job], None], give_up: Callable[[Job, BaseException], bool],
                 *, size: int = DEFAULT_WORKERS, max_attempts: int = DEFAULT_ATTEMPTS, retry_delay_s: float = 0.5,
                 scan_s: float = DEFAULT_SCAN_S, spool: Any = None, housekeeping: Callable[[], None] | None = None,
                 slack_wait_s: float = DEFAULT_SLACK_WAIT_S):
        self.inbox, self.handle, self.give_up = inbox, handle, give_up
        self.size, self.max_attempts, self.retry_delay_s = max(1, size), max(1, max_attempts), retry_delay_s
        self.scan_s = max(0.1, scan_s)
        self.slack_wait_s = slack_wait_s
        self._stopping = threading.Event()
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._busy = 0
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._running: set[str] = set()                 # job ids a worker of this process is running now
        self._accepting = True
        self._finished = 0                              # jobs run to the end (for the stop's log line)
        self.watch = DatabaseWatch(inbox, spool, self.submit, housekeeping=housekeeping)

    def start(self) -> int:
        """Start the workers and queue every job left open; returns how many were resumed."""
        resumed = self.inbox.open_jobs()
        for job in resumed:
            self._schedule(job)
        if resumed:
            log.info("resuming %d unfinished Slack job(s) from the inbox", len(resumed))
        for n in range(self.size):
            thread = threading.Thread(target=self._loop, name=f"slack-worker-{n}", daemon=True)
            thread.start()
            self._threads.append(thread)
        threading.Thread(target=self._scan_loop, name="slack-inbox-scan", daemon=True).start()
        self.watch.start()
        return len(resumed)

    def submit(self, job_id: str) -> None:
        if self._accepting:                             # draining: the job stays in the inbox for the next start
            self._queue.put(job_id)

    def _schedule(self, job: Job) -> None:
        """Queue a job now, or when its not-before time comes (a job Slack's rate limit put off)."""
        wait = _seconds_until(job.not_before)
        if wait <= 0:
            self.submit(job.id)
            return
        timer = threading.Timer(wait, self.submit, (job.id,))
        timer.daemon = True
        timer.start()

    def depth(self) -> int:
        """Jobs waiting or running: what a new question queues behind."""
        with self._lock:
            return self._queue.qsize() + self._busy

    def drain(self, deadline_s: float) -> tuple[int, int]:
        """A graceful stop (SIGTERM): take no new job, run what is queued or running until it is done or
        `deadline_s` has passed, then stop. What is left stays open in the inbox (queued, or running when cut
        off): the next start resumes it, and on PostgreSQL another replica claims it at once, since closing the
        inbox releases this replica's lease. Returns (jobs finished meanwhile, jobs left)."""
        end = time.monotonic() + max(0.0, deadline_s)
        self._accepting = False
        with self._lock:
            before = self._finished
        while time.monotonic() < end and self.depth() > 0:
            time.sleep(0.05)
        left = 0
        while True:                                     # the deadline: what is still queued stays in the inbox
            try:
                left += self._queue.get_nowait() is not None
            except queue.Empty:
                break
        with self._lock:
            left += self._busy                          # cut off while running: resumed or claimed later
        self.stop(timeout=max(0.5, end - time.monotonic()))
        with self._lock:
            return self._finished - before, left

    def stop(self, timeout: float = 5.0) -> None:
        """Let the workers finish their current job and exit (jobs still queued stay in the inbox); `timeout` is
        for all of them together."""
        self._stopping.set()
        self.watch.stop()
        for _ in self._threads:
            self._queue.put(None)
        end = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, end - time.monotonic()))

    def scan(self) -> bool:
        """Renew the lease, then claim up to the workers' free room (at least one per worker) of the jobs a dead
        replica left and queue them here; True when that filled the room (more may be waiting)."""
        if not self.inbox.heartbeat():
            log.warning("the database had dropped this replica's lease on its Slack jobs; it holds a new one now "
                        "(jobs claimed by other replicas meanwhile stay theirs)")
        room = max(self.size, 4 * self.size - self.depth())
        claimed = self.inbox.reclaim(room)
        for job in claimed:
            self._schedule(job)
        if claimed:
            log.info("claimed %d Slack job(s) left by a stopped replica", len(claimed))
        return len(claimed) >= room

    def _scan_loop(self) -> None:
        wait = self.scan_s
        while not self._stopping.wait(wait):
            wait = self.scan_s
            if not self.watch.is_up():                  # the watch renews the lease when the database is back
                continue
            try:
                wait = BACKLOG_SCAN_S if self.scan() else self.scan_s
            except StorageError as exc:                 # the database is away: said once, by the watch
                self.watch.down(exc)
            except Exception:                           # noqa: BLE001 - a defect: keep scanning, say what it was
                log.warning("could not scan the inbox for jobs left by stopped replicas", exc_info=True)

    def _loop(self) -> None:
        while True:
            job_id = self._queue.get()
            if job_id is None:
                return
            with self._lock:
                if job_id in self._running:             # a duplicate submit while it runs: that run finishes it
                    continue
                self._busy += 1
                self._running.add(job_id)
            try:
                self._run(job_id)
            except StorageError as exc:                 # the database is away: run it again when it is back
                self.watch.park(job_id, exc)
            except Exception:                           # noqa: BLE001 - the inbox itself failed: keep the worker
                log.exception("could not run Slack job %s (the inbox is not usable)", job_id)
            finally:
                with self._lock:
                    self._busy -= 1
                    self._finished += 1
                    self._running.discard(job_id)

    def _run(self, job_id: str) -> None:
        if not self.watch.is_up():                      # known to be away: do not try the job against it
            self.watch.hold(job_id)
            return
        job = self.inbox.start(job_id)
        if job is None:                                 # finished meanwhile (a duplicate submit): nothing to do
            return
        try:
            self.handle(job)
        except StorageError:                            # not the job's fault: handed back by _loop
            raise
        except RateLimited as exc:                      # Slack asks to wait: the job waits, the worker goes on
            self._defer(job, exc)
        except Exception as exc:                        # noqa: BLE001 - retried, then reported to the user
            self._failed(job, exc)

    def _defer(self, job: Job, limited: RateLimited) -> None:
        """Back to the inbox until the Retry-After ends (counted in gpu_advisor_slack_throttled_total)."""
        from bot.store.chain import iso_utc
        from bot.surfaces.metrics import slack_throttled
        if not isinstance(limited, SlackAway):           # Slack away: counted as errors, logged once (throttle.py)
            slack_throttled(limited.method)
        elif _seconds_since(job.received) > self.slack_wait_s:      # waited long enough: not delivered
            log.error("Slack job %s: the Slack API has not answered for %.0f s; recorded as not delivered",
                      job.id, self.slack_wait_s)
            self.inbox.finish(job.id, advice_id=limited.advice_id, delivered=False, error=str(limited))
            return
        not_before = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=limited.retry_after)
        self.inbox.defer(job.id, iso_utc(not_before), str(limited), limited.advice_id,
                         posted_unknown=isinstance(limited, SlackAway))
        timer = threading.Timer(limited.retry_after, self.submit, (job.id,))
        timer.daemon = True
        timer.start()

    def _failed(self, job: Job, exc: BaseException) -> None:
        error = f"{type(exc).__name__}: {exc}"
        if job.attempts < self.max_attempts:
            log.warning("Slack job %s failed (attempt %d of %d), retrying: %s", job.id, job.attempts,
                        self.max_attempts, error)
            self.inbox.retry(job.id, error)
            timer = threading.Timer(self.retry_delay_s * job.attempts, self.submit, (job.id,))
            timer.daemon = True
            timer.start()
            return
        log.error("Slack job %s (%s) failed after %d attempt(s): %s", job.id, job.kind, job.attempts, error,
                  exc_info=(type(exc), exc, exc.__traceback__))
        delivered = False
        try:
            delivered = self.give_up(job, exc)
        finally:
            self.inbox.fail(job.id, error, delivered=delivered)



def _moment(iso: str | None) -> dt.datetime | None:
    """An ISO-8601 UTC time of the inbox as a datetime; None when absent or unreadable."""
    try:
        return dt.datetime.fromisoformat(iso) if iso else None
    except ValueError:
        return None


def _seconds_until(moment: str | None) -> float:
    """Seconds from now to an ISO-8601 UTC time; 0 for None or the past."""
    then = _moment(moment)
    return max(0.0, (then - dt.datetime.now(dt.timezone.utc)).total_seconds()) if then else 0.0


def _seconds_since(moment: str | None) -> float:
    """Seconds from an ISO-8601 UTC time to now; 0 for None or the future."""
    then = _moment(moment)
    return max(0.0, (dt.datetime.now(dt.timezone.utc) - then).total_seconds()) if then else 0.0
