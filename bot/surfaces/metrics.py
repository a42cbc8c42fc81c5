"""Prometheus metrics for `gpu-advisor serve`, with the standard client library (prometheus-client).

Served at `GET /metrics` by `gpu-advisor serve` in both modes (bot/surfaces/slack/serve.py). What is counted:
- gpu_advisor_requests_total{surface, outcome}: turns by surface (dm, mention, slash, button, shortcut, cli) and
  outcome (the reply's status: answer, follow_up, info, out_of_scope; or error when the turn raised);
- gpu_advisor_answer_seconds{surface}: histogram of the turn's wall time (understanding, planning, session and
  audit writes; not Slack's delivery);
- gpu_advisor_slack_api_errors_total{method, error}: Web API calls Slack refused or that failed;
- gpu_advisor_slack_api_retries_total{reason}: retries by slack_sdk's handlers (connection, server_error);
- gpu_advisor_slack_throttled_total{method}: Slack answered 429 (the job waits in the inbox, Retry-After honoured);
- gpu_advisor_feedback_total{vote}: Helpful / Not helpful clicks;
- gpu_advisor_audit_rows and gpu_advisor_sessions: rows in the audit log and live (unexpired) sessions, read from
  the database when scraped;
- gpu_advisor_inbox_backlog and gpu_advisor_inbox_oldest_job_age_seconds: Slack jobs not finished (queued, running,
  or kept in the spool while the database is away) and the age of the oldest, from the database watch's last read
  (every 2 s; no database call at scrape time). Alert on the age: a backlog that drains stays young.
The one log line per turn is Service.ask's (bot/surfaces/service.py).
"""
from __future__ import annotations

from typing import Any, Callable

from prometheus_client import (CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector,
                               generate_latest)

REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)           # process_cpu_seconds_total, process_resident_memory_bytes, ...
REQUESTS = Counter("gpu_advisor_requests", "Turns answered, by surface and outcome (reply status, or error).",
                   ["surface", "outcome"], registry=REGISTRY)
LATENCY = Histogram("gpu_advisor_answer_seconds", "Wall time of one turn, by surface.", ["surface"],
                    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0), registry=REGISTRY)
SLACK_API_ERRORS = Counter("gpu_advisor_slack_api_errors", "Slack Web API calls refused or failed.",
                           ["method", "error"], registry=REGISTRY)
SLACK_API_RETRIES = Counter("gpu_advisor_slack_api_retries", "Slack Web API calls retried by slack_sdk.",
                            ["reason"], registry=REGISTRY)
SLACK_THROTTLED = Counter("gpu_advisor_slack_throttled", "Slack posts put off by a rate limit (a 429, or a "
                          "Retry-After still running for the channel): the job waits in the inbox.", ["method"],
                          registry=REGISTRY)
FEEDBACK = Counter("gpu_advisor_feedback", "Helpful / Not helpful votes on answers.", ["vote"], registry=REGISTRY)
AUDIT_ROWS = Gauge("gpu_advisor_audit_rows", "Rows in the audit log (read at scrape time).", registry=REGISTRY)
SESSIONS = Gauge("gpu_advisor_sessions", "Live conversation sessions (read at scrape time).", registry=REGISTRY)
INBOX_BACKLOG = Gauge("gpu_advisor_inbox_backlog", "Slack jobs not finished: queued or running in the inbox, or "
                      "kept in the local spool while the database is away.", registry=REGISTRY)
INBOX_OLDEST = Gauge("gpu_advisor_inbox_oldest_job_age_seconds", "Seconds since the oldest unfinished Slack job "
                     "was received (0 when none).", registry=REGISTRY)


_DATABASE_UP: list[Callable[[], bool]] = [lambda: True]


def bind(service: Any) -> None:
    """Read the audit-log and session gauges from this service's database when scraped: NaN while the database
    is away (known from `database_up`, see gate) or when the read fails, so a scrape never waits on it or fails."""
    AUDIT_ROWS.set_function(lambda: _read(service.audit.count))
    SESSIONS.set_function(lambda: _read(service.sessions.count))


def bind_inbox(backlog: Callable[[], float], oldest_age: Callable[[], float]) -> None:
    """The inbox gauges, read from the database watch's last look when scraped (bot/surfaces/slack/dbwatch.py)."""
    INBOX_BACKLOG.set_function(backlog)
    INBOX_OLDEST.set_function(oldest_age)


def gate(database_up: Callable[[], bool]) -> None:
    """What tells the gauges that the database is away (the Slack app's database watch)."""
    _DATABASE_UP[0] = database_up


def _read(count: Callable[[], int]) -> float:
    if not _DATABASE_UP[0]():
        return float("nan")
    try:
        return float(count())
    except Exception:                                    # noqa: BLE001 - the database failed meanwhile
        return float("nan")


def observe_turn(surface: str, outcome: str, seconds: float) -> None:
    """Count one turn (Service.ask calls this when metrics are on, i.e. under `serve`)."""
    REQUESTS.labels(surface, outcome).inc()
    LATENCY.labels(surface).observe(seconds)


def slack_error(method: str, error: str) -> None:
    SLACK_API_ERRORS.labels(method, (error or "unknown").split(" ")[0][:64]).inc()


def slack_throttled(method: str) -> None:
    SLACK_THROTTLED.labels(method).inc()


def exposition() -> tuple[bytes, str]:
    """(body, content type) of GET /metrics."""
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


_RETRY_REASONS = {"RateLimitErrorRetryHandler": "ratelimited", "ConnectionErrorRetryHandler": "connection",
                  "ServerErrorRetryHandler": "server_error"}


def count_retries(handlers: list[Any]) -> list[Any]:
    """slack_sdk's retry handlers, each retry they make counted in gpu_advisor_slack_api_retries_total{reason}."""
    for handler in handlers:
        original = handler.prepare_for_next_attempt
        reason = _RETRY_REASONS.get(type(handler).__name__, type(handler).__name__)

        def prepare(*args: Any, _original: Any = original, _reason: str = reason, **kwargs: Any) -> Any:
            SLACK_API_RETRIES.labels(_reason).inc()
            return _original(*args, **kwargs)
        handler.prepare_for_next_attempt = prepare
    return handlers
