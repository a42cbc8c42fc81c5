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

import threading
import time

__all__ = ["RateLimited", "Throttle"]

DEFAULT_RETRY_AFTER_S = 1.0


class RateLimited(Exception):
    """A Slack call that must wait `retry_after` seconds; not a failure of the job."""

    def __init__(self, method: str, channel: str, retry_after: float):
        self.method, self.channel, self.retry_after = method, channel, max(0.0, retry_after)
        super().__init__(f"{method} to {channel or 'the response_url'} is rate limited for {self.retry_after:.1f} s")


class Throttle:
    """Until when each (method, channel) must not be called: one per process, shared by every workspace's client."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._until: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def check(self, method: str, channel: str) -> None:
        """Raise RateLimited while a Retry-After for this method and channel is still running."""
        with self._lock:
            left = self._until.get((method, channel), 0.0) - self._clock()
            if left <= 0:
                self._until.pop((method, channel), None)
        if left > 0:
            raise RateLimited(method, channel, left)

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
