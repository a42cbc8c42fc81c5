"""Slack's rate limits without a waiting worker: a post that Slack answers with HTTP 429 (or that would go to a
method and channel still inside a Retry-After) raises RateLimited, and the worker pool puts the job back in the
inbox with its not-before time and takes the next one (bot/surfaces/slack/worker.py).

Why: slack_sdk's RateLimitErrorRetryHandler sleeps Retry-After inside the call, in the worker's thread. With
chat.postMessage answering 429 (Retry-After 20 s) for one channel, every worker slept there in turn and 0 of 20
acknowledged slash commands, most for other channels, were answered within 120 s. Limits are kept per (method,
channel): chat.postMessage's is per channel ("1 message per second per channel", Slack's rate-limit docs), so one
busy channel waits and the others do not.
"""
from __future__ import annotations

import logging
import threading
import time

__all__ = ["RateLimited", "SlackAway", "Throttle"]

log = logging.getLogger("gpu_advisor.slack")

DEFAULT_RETRY_AFTER_S = 1.0
AWAY_FIRST_S, AWAY_MAX_S = 2.0, 30.0      # Slack unreachable: every job waits 2 s, doubling to 30 s, until it is back
ANY = ("*", "")                            # the key of a hold on every method and channel


class RateLimited(Exception):
    """A Slack call that must wait `retry_after` seconds; not a failure of the job."""

    advice_id: str | None = None        # the job's recorded reply, set on the way out (bot/surfaces/slack/app.py)

    def __init__(self, method: str, channel: str, retry_after: float):
        self.method, self.channel, self.retry_after = method, channel, max(0.0, retry_after)
        super().__init__(f"{method} to {channel or 'the response_url'} is rate limited for {self.retry_after:.1f} s")


class SlackAway(RateLimited):
    """Slack cannot be reached (connection refused or reset, DNS, timeouts, 5xx after slack_sdk's retries): the
    job waits in the inbox like a rate-limited one, and is posted when Slack answers again."""

    def __init__(self, method: str, channel: str, retry_after: float, why: str = "unreachable"):
        super().__init__(method, channel, retry_after)
        self.why = why
        self.args = (f"{method} to {channel or 'the response_url'}: the Slack API cannot be reached ({why}); "
                     f"waiting {self.retry_after:.0f} s",)


class Throttle:
    """Until when each (method, channel) must not be called: one per process, shared by every workspace's client."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._until: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()
        self._away_since: float | None = None
        self._away_wait = AWAY_FIRST_S
        self._why = "unreachable"

    def check(self, method: str, channel: str) -> None:
        """Raise SlackAway while Slack is known to be unreachable, RateLimited while a Retry-After for this method
        and channel is still running."""
        with self._lock:
            now = self._clock()
            away = self._until.get(ANY, 0.0) - now
            left = self._until.get((method, channel), 0.0) - now
            if left <= 0:
                self._until.pop((method, channel), None)
        if away > 0:
            raise SlackAway(method, channel, away, self._why)
        if left > 0:
            raise RateLimited(method, channel, left)

    def away(self, method: str, channel: str, why: str) -> SlackAway:
        """Slack could not be reached: every call waits (2 s, doubling to 30 s while it stays away). Logged once
        per outage, with the reason; `reached` logs the end."""
        with self._lock:
            first = self._away_since is None
            if first:
                self._away_since, self._away_wait = self._clock(), AWAY_FIRST_S
            else:
                self._away_wait = min(AWAY_MAX_S, self._away_wait * 2)
            wait = self._away_wait
            self._until[ANY] = self._clock() + wait
            self._why = why
        if first:
            log.error("the Slack API cannot be reached (%s): replies wait in the inbox and are posted when it "
                      "answers again (retrying every %.0f-%.0f s)", why, AWAY_FIRST_S, AWAY_MAX_S)
        return SlackAway(method, channel, wait, why)

    def reached(self) -> None:
        """A call got through: if Slack had been away, say for how long, and let every job go."""
        if self._away_since is None:
            return
        with self._lock:
            since, self._away_since = self._away_since, None
            self._until.pop(ANY, None)
        if since is not None:
            log.warning("the Slack API answers again after %.0f s: the replies that waited are being posted",
                        self._clock() - since)

    def state(self) -> dict[str, object]:
        """For /readyz: whether the Slack API answered the last call (or for how long it has not)."""
        since, why = self._away_since, self._why
        if since is None:
            return {"slack_api": "reachable"}
        return {"slack_api": "unreachable", "slack_api_away_s": round(self._clock() - since, 1), "slack_api_why": why}

    def limited(self, method: str, channel: str, retry_after: str | float | None) -> RateLimited:
        """Slack said 429: remember the Retry-After (seconds; 1 when absent or unreadable) and return the error."""
        try:
            seconds = float(retry_after) if retry_after not in (None, "") else DEFAULT_RETRY_AFTER_S
        except (TypeError, ValueError):
            seconds = DEFAULT_RETRY_AFTER_S
        with self._lock:
            key = (method, channel)
            self._until[key] = max(self._until.get(key, 0.0), self._clock() + seconds)
        return RateLimited(method, channel, seconds)
