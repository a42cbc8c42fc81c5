"""Test doubles shared by the store suites (imported like slack_stub: tests/ is on the path)."""
from __future__ import annotations

import datetime as dt

UTC = dt.timezone.utc


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, start: dt.datetime = dt.datetime(2026, 3, 1, 9, 0, tzinfo=UTC)):
        self.now = start

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += dt.timedelta(**delta)
