"""Who the bot is in its one workspace (auth.test: its user id, bot id, team), learned in the background, so that
no Slack request waits for the Slack API and none fails because it cannot be reached.

Why: Bolt's single-workspace authorization calls auth.test on the first request; with the Slack API unreachable
every event waited for slack_sdk's retries and got HTTP 500 after 4.3 s, with a traceback each, and Slack gave up
on them. Now the request is authorized with the configured token at once (the bot user id, until auth.test has
answered, from the event's own `authorizations`), the event is written to the inbox and acknowledged, and the
reply waits in the inbox until Slack answers again (bot/surfaces/slack/throttle.py: one log line per outage).
"""
from __future__ import annotations

import logging
import threading
from typing import Any

from slack_bolt.authorization import AuthorizeResult
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.surfaces.slack.throttle import AWAY_FIRST_S, AWAY_MAX_S

log = logging.getLogger("gpu_advisor.slack")

__all__ = ["BotIdentity"]


class BotIdentity:
    """`authorizer()` for Bolt (App(authorize=...)); auth.test is asked on the first request, in the background,
    until it answers."""

    def __init__(self, client: WebClient):
        self.client = client
        self.result: dict[str, Any] | None = None
        self._stop = threading.Event()
        self._started = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Ask auth.test in the background (once; on the first request, so that building the app calls nothing)."""
        with self._started:
            if self._thread is None:
                self._thread = threading.Thread(target=self._learn, name="slack-auth-test", daemon=True)
                self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def authorizer(self) -> Any:
        """The function Bolt calls per request (a plain function: Bolt passes arguments by their names)."""
        def authorize(enterprise_id: str | None, team_id: str | None) -> AuthorizeResult:
            if self.result is None:
                self.start()
            known = self.result or {}
            return AuthorizeResult(enterprise_id=enterprise_id or known.get("enterprise_id"),
                                   team_id=team_id or known.get("team_id"), bot_token=self.client.token,
                                   bot_user_id=known.get("user_id"), bot_id=known.get("bot_id"))
        return authorize

    def _learn(self) -> None:
        wait, told = AWAY_FIRST_S, False
        while not self._stop.is_set():
            try:
                self.result = dict(self.client.auth_test().data)
            except SlackApiError as exc:                 # Slack answered: the token is refused
                why = (exc.response or {}).get("error") if hasattr(exc.response, "get") else str(exc)
                if not told:
                    log.error("Slack refuses SLACK_BOT_TOKEN (auth.test: %s): fix the token (the app's Bot User "
                              "OAuth Token, xoxb-...) and restart; requests are recorded meanwhile", why)
                told = True
            except Exception as exc:                     # noqa: BLE001 - unreachable: DNS, refused, timeouts
                if not told:
                    log.error("the Slack API cannot be reached at start (%s: %s): requests are recorded and "
                              "acknowledged, replies wait in the inbox; retrying every %.0f-%.0f s",
                              type(exc).__name__, exc, AWAY_FIRST_S, AWAY_MAX_S)
                told = True
            else:
                if told:
                    log.warning("the Slack API answers: the bot is %s in team %s", self.result.get("user_id"),
                                self.result.get("team_id"))
                return
            self._stop.wait(wait)
            wait = min(AWAY_MAX_S, wait * 2)


def bot_user_of(context: Any, body: dict) -> str | None:
    """The bot's own user id: Bolt's, else the event's `authorizations` (known before auth.test has answered)."""
    known = getattr(context, "bot_user_id", None)
    if known:
        return known
    for auth in (body.get("authorizations") or []) if isinstance(body, dict) else []:
        if isinstance(auth, dict) and auth.get("is_bot") and auth.get("user_id"):
            return str(auth["user_id"])
    return None
