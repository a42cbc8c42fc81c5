"""Slack settings from the environment, validated once at start-up, and logging that never shows a secret.

Variables (DESIGN.md "Environment"): SLACK_BOT_TOKEN (xoxb-, one workspace), SLACK_SIGNING_SECRET (HTTP mode),
SLACK_APP_TOKEN (xapp-, Socket Mode), SLACK_API_BASE_URL (optional Web API base, e.g. a stand-in server in
tests), ADVISOR_SLASH_COMMAND (default /gpu-advisor). Many workspaces (bot/surfaces/slack/oauth.py): SLACK_CLIENT_ID
and SLACK_CLIENT_SECRET (Slack's names) turn on the OAuth install flow in HTTP mode, with ADVISOR_TOKEN_KEY (the
Fernet key(s) sealing the installed tokens) and optionally SLACK_REDIRECT_URI; SLACK_BOT_TOKEN is then not needed. Logging (ADVISOR_LOG_LEVEL, ADVISOR_LOG_FORMAT) is bot/surfaces/logs.py's.
A missing or malformed setting raises ConfigError naming the variable; the message never contains its value.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from bot.records import config
from bot.records.errors import ConfigError

DEFAULT_API_BASE_URL = "https://slack.com/api/"
_BOT_TOKEN = re.compile(r"^xoxb-[A-Za-z0-9-]{8,}$")
_APP_TOKEN = re.compile(r"^xapp-[A-Za-z0-9-]{8,}$")
_SIGNING_SECRET = re.compile(r"^[0-9a-fA-F]{32}$")
_CLIENT_ID = re.compile(r"^[0-9]+\.[0-9]+$")          # e.g. 1234567890123.1234567890123 (Basic Information)
_CLIENT_SECRET = _SIGNING_SECRET                      # 32 hexadecimal characters too


def _kind(value: str) -> str:
    """What a malformed token looks like, without showing it: its prefix only when it is a known kind."""
    m = re.match(r"^(xox[abposr]|xapp)-", value)
    return f"a token starting with {m.group(1)}-" if m else "something that is not a Slack token"


# The example values of deploy/slack.env.example and docs: well-formed on purpose, so only this list catches them.
PLACEHOLDERS = ("xoxb-your-bot-token", "xapp-your-app-level-token", "0123456789abcdef0123456789abcdef")
_PLACEHOLDER_WORDS = re.compile(r"your|example|placeholder|changeme|replace", re.IGNORECASE)


def is_placeholder(value: str) -> bool:
    """A value copied from an example rather than from Slack: the example's own values, or words like 'your'."""
    return value.strip() in PLACEHOLDERS or bool(_PLACEHOLDER_WORDS.search(value))


def _check_bot(bot: str) -> None:
    if not bot:
        raise ConfigError("SLACK_BOT_TOKEN is not set",
                          fix="set SLACK_BOT_TOKEN to the app's Bot User OAuth Token (xoxb-...), see docs/slack.md")
    if not _BOT_TOKEN.match(bot):
        raise ConfigError(f"SLACK_BOT_TOKEN is malformed: it holds {_kind(bot)}, not a bot token",
                          fix="use the Bot User OAuth Token from OAuth & Permissions; it starts with xoxb-")


def safe_url(url: str) -> str:
    """`url` fit to print: a user name and password, a query and a fragment (where a proxy key may sit) masked."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an unparsable URL)"
    if not parts.scheme or not host:              # no URL structure: shown as is unless it may hide a secret
        return url if "@" not in url and "?" not in url and "#" not in url else "(a value that is not a URL)"
    auth = "***@" if parts.username or parts.password else ""
    tail = ("?***" if parts.query else "") + ("#***" if parts.fragment else "")
    return f"{parts.scheme}://{auth}{host}{port}{parts.path}{tail}"


def url_secrets(url: str) -> list[str]:
    """The secret parts of a URL (user info, query, fragment), for the log filter to blank wherever they appear."""
    try:
        parts = urlsplit(url)
        found = [parts.password, parts.username, parts.query, parts.fragment]
    except ValueError:
        return [url]
    return [f for f in found if f and len(f) >= 4]


def _base_url(base: str) -> str:
    base = (base or "").strip() or DEFAULT_API_BASE_URL
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ConfigError(f"SLACK_API_BASE_URL={safe_url(base)!r} is not an http(s) URL without a query",
                          fix="use e.g. https://slack.com/api/ (the default), or unset it")
    return base if base.endswith("/") else base + "/"


@dataclass(frozen=True)
class SlackSettings:
    bot_token: str = field(repr=False)
    signing_secret: str | None = field(default=None, repr=False)
    app_token: str | None = field(default=None, repr=False)
    api_base_url: str = DEFAULT_API_BASE_URL
    slash_command: str = "/gpu-advisor"
    client_id: str | None = None                                  # set: many workspaces through OAuth
    client_secret: str | None = field(default=None, repr=False)
    redirect_uri: str | None = None
    token_key: str | None = field(default=None, repr=False)
    admins: tuple[str, ...] = ()                                  # ADVISOR_SLACK_ADMINS: may edit workspace settings

    @property
    def multi_workspace(self) -> bool:
        return bool(self.client_id and self.client_secret)

    @classmethod
    def from_env(cls, mode: str) -> "SlackSettings":
        """Read and check the settings `mode` ("http" or "socket") needs; ConfigError names the first bad one.
        The values come from the one settings object (bot/records/config.py), secrets as SecretStr."""
        if mode not in ("http", "socket"):
            raise ConfigError(f"unknown serve mode {mode!r}", fix="use --http or --socket")
        conf = config.settings()
        reveal = lambda v: v.get_secret_value().strip() if v is not None else ""  # noqa: E731
        bot, secret, app = (reveal(conf.slack_bot_token), reveal(conf.slack_signing_secret) or None,
                            reveal(conf.slack_app_token) or None)
        oauth = _oauth_settings(conf, mode, reveal)
        if not oauth:
            _check_bot(bot)
        if mode == "http" and not secret:
            raise ConfigError("SLACK_SIGNING_SECRET is not set (HTTP mode verifies every request with it)",
                              fix="set SLACK_SIGNING_SECRET from Basic Information > App Credentials, "
                                  "or set SLACK_APP_TOKEN to use Socket Mode")
        if secret and not _SIGNING_SECRET.match(secret):
            raise ConfigError("SLACK_SIGNING_SECRET is malformed: Slack signing secrets are 32 hexadecimal characters",
                              fix="copy the Signing Secret again from Basic Information > App Credentials")
        if mode == "socket" and not app:
            raise ConfigError("SLACK_APP_TOKEN is not set (Socket Mode needs an app-level token)",
                              fix="create an app-level token with connections:write under Basic Information "
                                  "and set SLACK_APP_TOKEN, or run `gpu-advisor serve --http`")
        if app and not _APP_TOKEN.match(app):
            raise ConfigError(f"SLACK_APP_TOKEN is malformed: it holds {_kind(app)}, not an app-level token",
                              fix="use the app-level token from Basic Information; it starts with xapp-")
        for name, value in (("SLACK_BOT_TOKEN", bot), ("SLACK_APP_TOKEN", app), ("SLACK_SIGNING_SECRET", secret),
                            ("SLACK_CLIENT_SECRET", oauth.get("client_secret"))):
            if value and is_placeholder(value):
                raise ConfigError(f"{name} still holds the placeholder of deploy/slack.env.example",
                                  fix=f"replace it by your app's real value (docs/slack.md, 'Set up')")
        return cls(bot_token=bot if not oauth else "", signing_secret=secret, app_token=app,
                   api_base_url=_base_url(conf.slack_api_base_url), slash_command=config.slash_command(),
                   admins=_admins(conf.advisor_slack_admins), **oauth)

    def secrets(self) -> list[str]:
        keys = [k for k in re.split(r"[,\s]+", self.token_key or "") if k]
        return [s for s in (self.bot_token, self.signing_secret, self.app_token, self.client_secret) if s] + keys \
            + url_secrets(self.api_base_url)


_USER_ID = re.compile(r"^[UW][A-Z0-9]{2,20}$")


def _admins(value: str | None) -> tuple[str, ...]:
    """ADVISOR_SLACK_ADMINS: Slack user ids (U…, W…), comma- or space-separated; ConfigError naming a bad one."""
    ids = tuple(v for v in re.split(r"[,\s]+", value or "") if v)
    bad = [v for v in ids if not _USER_ID.match(v)]
    if bad:
        raise ConfigError(f"ADVISOR_SLACK_ADMINS holds {bad[0][:24]!r}, which is not a Slack user id",
                          fix="list user ids such as U0123ABCD (a profile's ⋮ > Copy member ID), separated by commas")
    return ids


def _oauth_settings(conf: object, mode: str, reveal) -> dict[str, str | None]:
    """{} for one workspace (SLACK_CLIENT_ID/SECRET unset); else the checked client id, secret, redirect URI and
    token key. ConfigError for half a pair, a malformed value, Socket Mode, or a missing/malformed ADVISOR_TOKEN_KEY."""
    client_id, client_secret = (conf.slack_client_id or "").strip(), reveal(conf.slack_client_secret)
    if not client_id and not client_secret:
        return {}
    if not (client_id and client_secret):
        have, lack = ("SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET") if client_id else ("SLACK_CLIENT_SECRET",
                                                                                    "SLACK_CLIENT_ID")
        raise ConfigError(f"{have} is set but {lack} is not: installing in many workspaces needs both",
                          fix=f"set {lack} from Basic Information > App Credentials, or unset {have} to serve the "
                              "one workspace of SLACK_BOT_TOKEN")
    if mode != "http":
        raise ConfigError("SLACK_CLIENT_ID/SLACK_CLIENT_SECRET (install in many workspaces) need HTTP mode: Slack "
                          "sends the install redirect and each workspace's events to the app's public URL",
                          fix="run `gpu-advisor serve --http` without SLACK_APP_TOKEN, or unset SLACK_CLIENT_ID and "
                              "SLACK_CLIENT_SECRET for Socket Mode in one workspace")
    if not _CLIENT_ID.match(client_id):
        raise ConfigError("SLACK_CLIENT_ID is malformed: Slack client ids are two numbers joined by a dot",
                          fix="copy the Client ID from Basic Information > App Credentials")
    if not _CLIENT_SECRET.match(client_secret):
        raise ConfigError("SLACK_CLIENT_SECRET is malformed: Slack client secrets are 32 hexadecimal characters",
                          fix="copy the Client Secret from Basic Information > App Credentials")
    redirect = (conf.slack_redirect_uri or "").strip() or None
    if redirect and urlsplit(redirect).scheme not in ("https", "http"):
        raise ConfigError(f"SLACK_REDIRECT_URI={safe_url(redirect)!r} is not an http(s) URL",
                          fix="set it to https://<your host>/slack/oauth_redirect, as listed under OAuth & "
                              "Permissions > Redirect URLs, or unset it")
    key = reveal(conf.advisor_token_key)
    from bot.store.tokens import TokenCipher
    TokenCipher(key)                       # ConfigError when missing or malformed (never showing the key)
    return {"client_id": client_id, "client_secret": client_secret, "redirect_uri": redirect, "token_key": key}


# ----- logging without secrets ---------------------------------------------------------------------------------
# bot/surfaces/logs.py redacts anything shaped like a Slack token and the values of the SLACK_* secrets. Bolt also logs
# whole request bodies (e.g. on a bad signature), and those carry Slack's legacy verification token as
# `token=...` or `"token": "..."`; this filter, added to the same handlers, blanks such fields too.
_TOKEN_FIELD_RE = re.compile(r"""((?:\b|["'])(?:token|authorization)["']?\s*[:=]\s*["']?)(?:Bearer\s+)?[^"'&\s,}]+""",
                             re.IGNORECASE)


class TokenFieldFilter(logging.Filter):
    """Blanks `token=...`, `"token": "..."` and `Authorization: ...` values in a record's message."""

    @staticmethod
    def redact(text: str) -> str:
        return _TOKEN_FIELD_RE.sub(r"\1[redacted]", text)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 -- a bad format string: keep the raw message, still redacted
            message = str(record.msg)
        record.msg, record.args = self.redact(message), None
        return True


def setup_logging(settings: SlackSettings) -> None:
    """bot/surfaces/logs.py's logging (ADVISOR_LOG_FORMAT, ADVISOR_LOG_LEVEL, token redaction) plus TokenFieldFilter."""
    from bot.surfaces.logs import setup_logging as setup
    setup(secrets=settings.secrets())
    flt = TokenFieldFilter()
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, TokenFieldFilter) for f in handler.filters):
            handler.addFilter(flt)
    # slack_sdk logs an ERROR for every attempt that cannot reach Slack; the app says it once per outage, with the
    # reason (bot/surfaces/slack/throttle.py), and each refused call with Slack's answer (outbound.py)
    for name in ("slack_sdk.web.base_client", "slack_sdk.webhook.client"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
