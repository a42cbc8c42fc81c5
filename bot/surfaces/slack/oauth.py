"""Many workspaces: Bolt's OAuth flow (`GET /slack/install`, `GET /slack/oauth_redirect`) with the installation and
state stores in ADVISOR_DB (bot/store/installations.py: tokens encrypted with ADVISOR_TOKEN_KEY).

On when SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are set (HTTP mode); otherwise the app is the single-workspace app of
SLACK_BOT_TOKEN, unchanged. In OAuth mode:
- an incoming request is authorised by Bolt's InstallationStoreAuthorize: the team's bot from `slack_bots`, checked
  once with auth.test (the result cached per token), so Bolt's `context.client` carries that team's token;
- the worker that answers a job later (bot/surfaces/slack/app.py) asks `TeamClients` for the client of the job's
  team: the same stored token, never one copied into the inbox (jobs hold no token);
- tokens_revoked and app_uninstalled delete the workspace's rows (Bolt's token revocation listeners).
"""
from __future__ import annotations

import inspect
import logging
import threading
from typing import Any, Callable

from slack_sdk import WebClient
from slack_sdk.oauth.installation_store import Bot, Installation, InstallationStore
from slack_sdk.oauth.state_store import OAuthStateStore

from bot.store.installations import STATE_TTL_S
from bot.surfaces.slack.outbound import Outbound

log = logging.getLogger("gpu_advisor.slack")

# The bot scopes of deploy/slack-app-manifest.yml (tests/test_slack_oauth.py keeps the two equal).
BOT_SCOPES = ("app_mentions:read", "channels:history", "chat:write", "commands", "groups:history", "im:history")


def _fields(obj: Any) -> dict[str, Any]:
    """An Installation's or Bot's attributes as plain values (what the store keeps)."""
    return {k: v for k, v in vars(obj).items() if k != "custom_values"}


def _build(cls: type, row: dict[str, Any] | None) -> Any:
    """slack_sdk's object from a stored row, keeping only what its constructor takes."""
    if row is None:
        return None
    accepted = set(inspect.signature(cls.__init__).parameters)
    return cls(**{k: v for k, v in row.items() if k in accepted})


class AdvisorInstallationStore(InstallationStore):
    """slack_sdk's InstallationStore over bot/store/installations.py (SQLite or PostgreSQL)."""

    def __init__(self, rows: Any):
        self.rows = rows

    @property
    def logger(self) -> logging.Logger:
        return log

    def save(self, installation: Installation) -> None:
        self.rows.save_installation(_fields(installation))
        log.info("installed in workspace %s (%s)", installation.team_id or installation.enterprise_id,
                 installation.team_name or "?")

    def save_bot(self, bot: Bot) -> None:
        self.rows.save_bot(_fields(bot))

    def find_bot(self, *, enterprise_id: str | None, team_id: str | None,
                 is_enterprise_install: bool | None = False) -> Bot | None:
        return _build(Bot, self.rows.find_bot(enterprise_id, team_id, is_enterprise_install))

    def find_installation(self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None,
                          is_enterprise_install: bool | None = False) -> Installation | None:
        return _build(Installation, self.rows.find_installation(enterprise_id, team_id, user_id,
                                                                 is_enterprise_install))

    def delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self.rows.delete_bot(enterprise_id, team_id)

    def delete_installation(self, *, enterprise_id: str | None, team_id: str | None,
                            user_id: str | None = None) -> None:
        self.rows.delete_installation(enterprise_id, team_id, user_id)


class AdvisorStateStore(OAuthStateStore):
    """slack_sdk's OAuthStateStore over the same database: a state is issued on one replica and consumed on any."""

    def __init__(self, rows: Any, expiration_seconds: int = STATE_TTL_S):
        self.rows, self.expiration_seconds = rows, expiration_seconds

    @property
    def logger(self) -> logging.Logger:
        return log

    def issue(self, *args: Any, **kwargs: Any) -> str:
        return self.rows.issue_state(self.expiration_seconds)

    def consume(self, state: str) -> bool:
        ok = self.rows.consume_state(state)
        if not ok:
            log.warning("OAuth redirect refused: its state is unknown, expired or already used")
        return ok


def oauth_settings(settings: Any, rows: Any) -> Any:
    """Bolt's OAuthSettings for `settings` (client id/secret, redirect URI) and the stores over `rows`."""
    from slack_bolt.oauth.oauth_settings import OAuthSettings
    return OAuthSettings(client_id=settings.client_id, client_secret=settings.client_secret, scopes=list(BOT_SCOPES),
                         user_scopes=[], redirect_uri=settings.redirect_uri, install_path="/slack/install",
                         redirect_uri_path="/slack/oauth_redirect", installation_store=AdvisorInstallationStore(rows),
                         installation_store_bot_only=True, state_store=AdvisorStateStore(rows),
                         state_expiration_seconds=STATE_TTL_S, logger=log)


def cached_authorize(oauth: Any) -> Any:
    """Bolt's InstallationStoreAuthorize with its auth.test result cached per token (an ack then needs no Web API
    call: find_bot still runs on every request, so an uninstalled workspace is refused at once)."""
    from slack_bolt.authorization.authorize import InstallationStoreAuthorize
    return InstallationStoreAuthorize(logger=log, installation_store=oauth.installation_store,
                                      client_id=oauth.client_id, client_secret=oauth.client_secret,
                                      token_rotation_expiration_minutes=oauth.token_rotation_expiration_minutes,
                                      bot_only=True, cache_enabled=True)


class TeamClients:
    """Which Web API client answers a job: the single workspace's, or the installed bot's of the job's team.

    Clients are kept per token (a reinstall brings a new token, hence a new client); a bot whose token rotates
    (refresh token present) is refreshed here too, as Bolt's authorize does for requests.
    """

    def __init__(self, default: WebClient, rows: Any = None, make_client: Callable[[str], WebClient] | None = None,
                 client_id: str | None = None, client_secret: str | None = None):
        self.default, self.rows, self.make_client = Outbound(default), rows, make_client
        self.client_id, self.client_secret = client_id, client_secret
        self._by_token: dict[str, Outbound] = {}
        self._lock = threading.Lock()

    @property
    def multi(self) -> bool:
        return self.rows is not None

    def outbound(self, team: str | None) -> Outbound:
        """The Outbound for `team`; LookupError when the app is not installed there (uninstalled meanwhile)."""
        if self.rows is None:
            return self.default
        bot = self.rows.find_bot(None, team or None)
        if bot is None or not bot.get("bot_token"):
            raise LookupError(f"gpu-advisor is not installed in workspace {team or '(none)'}")
        token = self._fresh(bot)
        with self._lock:
            out = self._by_token.get(token)
            if out is None:
                out = self._by_token[token] = Outbound(self.make_client(token))
            return out

    def _fresh(self, bot: dict[str, Any]) -> str:
        if not bot.get("bot_refresh_token"):
            return bot["bot_token"]
        from slack_sdk.oauth.token_rotation import TokenRotator
        rotator = TokenRotator(client_id=self.client_id, client_secret=self.client_secret,
                               client=self.make_client(""))
        renewed = rotator.perform_bot_token_rotation(bot=_build(Bot, bot), minutes_before_expiration=120)
        if renewed is None:
            return bot["bot_token"]
        self.rows.save_bot(_fields(renewed))
        return renewed.bot_token
