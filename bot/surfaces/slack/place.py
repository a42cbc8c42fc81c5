"""Where a Slack conversation lives and where its answers go, carried in a button's block_id.

Its own module so that the app (bot/surfaces/slack/app.py) and the button handlers (interactions.py) both use it
without importing each other."""
from __future__ import annotations

import re
from dataclasses import dataclass

_SLACK_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


@dataclass(frozen=True)
class Place:
    """Where a conversation lives and where its answers go."""
    kind: str                       # dm | mention | slash
    channel: str
    session_thread: str | None      # the thread part of the session key
    reply_thread: str | None        # thread_ts for the answer (None: top level, or response_url for slash)
    owner: str                      # the user whose conversation it is

    def block_id(self, prefix: str = "followup") -> str:
        return "|".join([prefix, self.kind, self.session_thread or "-", self.reply_thread or "-", self.owner])

    @classmethod
    def from_block_id(cls, block_id: str | None, channel: str | None) -> "Place | None":
        parts = (block_id or "").split("|")
        if len(parts) != 5 or parts[0] not in ("followup", "refine") or parts[1] not in ("dm", "mention", "slash") \
                or not channel:
            return None
        if not all(_SLACK_ID.match(p) for p in parts[2:]):
            return None
        none = lambda p: None if p == "-" else p  # noqa: E731
        return cls(parts[1], channel, none(parts[2]), none(parts[3]), parts[4])
