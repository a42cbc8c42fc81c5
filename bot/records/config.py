"""Settings from the environment, in one place: one typed object (pydantic-settings), read by every entry point.

`settings()` reads the environment each time it is called (tests and `doctor` change it), and checks the shape of
every value: a value that cannot be right (a port that is not a number, a log level that does not exist, an
http(s) URL that is not one) is a ConfigError naming the variable and how to fix it; secrets are SecretStr, so
they never show in a repr, a log line or an error. Checks that need the knowledge base (is ADVISOR_DEFAULT_PROVIDER
a provider?) are `check_provider`, run by the surfaces once the knowledge base is loaded. The variables are
those of DESIGN.md "Environment" and docs/operations.md.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

from bot.records.errors import ConfigError

_REPO = Path(__file__).resolve().parents[2]
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LOG_FORMATS = ("text", "json")
DEFAULT_PROVIDER = "huaweicloud"
DEFAULT_API_BASE_URL = "https://slack.com/api/"


def _model() -> type:
    """The settings class, built on first use: pydantic-settings costs ~50 ms to import, which a command that
    never reads a setting (`--help`, `--version`) should not pay."""
    global _SETTINGS_CLASS
    if _SETTINGS_CLASS is not None:
        return _SETTINGS_CLASS
    from pydantic import SecretStr, field_validator
    from pydantic_settings import BaseSettings, SettingsConfigDict

    class Settings(BaseSettings):
        """Every environment variable gpu-advisor reads (names are the field names, upper-cased)."""
        model_config = SettingsConfigDict(extra="ignore", case_sensitive=False, frozen=True)

        advisor_db: Path | str | None = None        # str: a postgresql:// URL (see db_target)
        advisor_knowledge_dir: Path | None = None
        advisor_rules_dir: Path | None = None
        advisor_prices_file: Path | None = None
        advisor_default_provider: str = DEFAULT_PROVIDER
        advisor_slash_command: str = "/gpu-advisor"
        advisor_log_level: str = "INFO"
        advisor_log_format: str = "text"
        slack_bot_token: SecretStr | None = None
        slack_app_token: SecretStr | None = None
        slack_signing_secret: SecretStr | None = None
        slack_api_base_url: str = DEFAULT_API_BASE_URL
        slack_client_id: str | None = None          # many workspaces (OAuth): with SLACK_CLIENT_SECRET
        slack_client_secret: SecretStr | None = None
        slack_redirect_uri: str | None = None        # the public https URL of /slack/oauth_redirect (optional)
        advisor_token_key: SecretStr | None = None   # Fernet key(s) sealing the installed tokens (OAuth)
        advisor_slack_admins: str | None = None      # Slack user ids who may change a workspace's settings
        port: str = "3000"
        advisor_socket_ping_s: float = 10.0       # Socket Mode keepalive ping; /readyz fails after 3 unanswered
        advisor_inbox_scan_s: float = 5.0         # how often a replica claims the Slack jobs of a dead one
        advisor_spool_dir: Path | None = None       # Slack requests kept while the database is away
        advisor_inbox_keep_hours: float = 24.0     # a finished Slack job's question is kept this long
        advisor_slack_wait_s: float = 3600.0       # a reply waits this long for an unreachable Slack API
        advisor_stop_grace_s: float = 12.0         # SIGTERM: how long the workers may finish (k8s grace: 20 s)
        advisor_price_max_age_days: int = 90       # a price or rate older than this is flagged (answers, kb audit)

        @field_validator("advisor_default_provider", "advisor_log_format", mode="before")
        @classmethod
        def _lower(cls, v: Any) -> Any:
            return (str(v).strip().lower() or None) if v is not None else v

        @field_validator("advisor_log_level", mode="before")
        @classmethod
        def _upper(cls, v: Any) -> Any:
            return str(v).strip().upper() or "INFO"

        @field_validator("slack_bot_token", "slack_app_token", "slack_signing_secret", "slack_client_id",
                         "slack_client_secret", "slack_redirect_uri", "advisor_token_key", mode="before")
        @classmethod
        def _blank_is_unset(cls, v: Any) -> Any:
            return None if v is None or not str(v).strip() else v

        @field_validator("advisor_db", "advisor_knowledge_dir", "advisor_rules_dir", "advisor_prices_file",
                         "advisor_spool_dir", mode="before")
        @classmethod
        def _path(cls, v: Any) -> Any:
            if isinstance(v, str) and v.strip().lower().startswith(DB_URL_SCHEMES):
                return v.strip()                     # a server URL: Path() would fold its '//'
            return Path(str(v)).expanduser() if v not in (None, "") else None

    _SETTINGS_CLASS = Settings
    return Settings


_SETTINGS_CLASS: type | None = None
# the last environment read and its settings: an answer asks several settings, and building them took ~6 ms
_LAST: list[Any] = [None, None]


def settings() -> Any:
    """The settings now, typed; ConfigError names a variable that cannot even be read (never its secret value).
    Each accessor below reads one field, so one wrong variable does not hide the others; `validate()` checks
    them all and is what every entry point calls at start."""
    from pydantic import ValidationError
    env = tuple(sorted(os.environ.items()))
    if _LAST[0] == env:
        return _LAST[1]               # the settings read only the environment: unchanged, the same settings
    try:
        made = _model()()
        _LAST[:] = [env, made]
        return made
    except ValidationError as exc:
        err = exc.errors()[0]
        name = str(err["loc"][0]).upper() if err.get("loc") else "a setting"
        raise ConfigError(f"{name} is not valid: {err['msg']}",
                          fix=f"correct or unset {name} (docs/operations.md lists every variable)") from None


def validate() -> Any:
    """Every setting checked (the same rules `doctor` reports one by one): `ask`, `chat` and `serve` call this at
    start, so a wrong value stops them with its fix instead of being ignored. Returns the settings."""
    s = settings()
    port = s.port.strip()
    if not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"PORT={port!r} is not a port number", fix="set PORT to 1-65535, or unset it (3000)")
    if s.advisor_log_level not in LOG_LEVELS:
        raise ConfigError(f"ADVISOR_LOG_LEVEL={s.advisor_log_level!r} is not a log level",
                          fix="use one of " + ", ".join(LOG_LEVELS) + ", or unset it (INFO)")
    if s.advisor_log_format not in LOG_FORMATS:
        raise ConfigError(f"ADVISOR_LOG_FORMAT={s.advisor_log_format!r} is not a log format",
                          fix="use text or json, or unset it (text)")
    if s.advisor_inbox_keep_hours < 0:
        raise ConfigError(f"ADVISOR_INBOX_KEEP_HOURS={s.advisor_inbox_keep_hours:g} is negative",
                          fix="set it to the hours a finished Slack job keeps its question (0: at once), or unset "
                              "it (24)")
    cmd = s.advisor_slash_command.strip()
    if not cmd.startswith("/") or " " in cmd or len(cmd) > 32:
        raise ConfigError(f"ADVISOR_SLASH_COMMAND={cmd!r} is not a slash command",
                          fix="use a single word starting with '/', e.g. /gpu-advisor")
    return s


def check_provider(providers: Iterable[str], value: str | None = None) -> str:
    """ADVISOR_DEFAULT_PROVIDER checked against the knowledge base's providers: a misspelt one is an error
    naming the valid ones (it used to fall back to Huawei Cloud without a word)."""
    value = value if value is not None else settings().advisor_default_provider
    known = sorted(providers)
    if value not in known:
        from difflib import get_close_matches
        guess = get_close_matches(value, known, n=1)
        raise ConfigError(f"ADVISOR_DEFAULT_PROVIDER={value!r} is not a provider in the knowledge base",
                          fix=(f"did you mean {guess[0]}? " if guess else "") + "use one of " + ", ".join(known))
    return value


# ----- the values, as the rest of the code reads them ------------------------------------------------------------
def _data_dir(configured: Path | None, env: str, name: str) -> Path:
    """knowledge/ and rules/: the configured folder, else beside the package (a checkout), else the package's
    own copy (bot/data/, found through importlib.resources: a venv, --user or a container install)."""
    if configured is not None:
        if not configured.is_dir():
            raise ConfigError(f"{env}={configured} is not a directory",
                              fix=f"point {env} at the folder holding the {name} YAML files, or unset it")
        return configured
    candidates = [_REPO / name, _packaged(name), Path(os.sys.prefix) / "share" / "gpu-advisor" / name,
                  Path("/app") / name]
    for path in candidates:
        if path.is_dir():
            return path
    raise ConfigError(f"no {name}/ folder found (looked in {', '.join(str(c) for c in candidates)})",
                      fix=f"set {env} to the folder holding the {name} YAML files")


def _packaged(name: str) -> Path:
    """The copy an installed wheel carries as package data (bot/data/<name>, see setup.py)."""
    from importlib.resources import files
    return Path(str(files("bot").joinpath("data", name)))


def knowledge_dir() -> Path:
    return _data_dir(settings().advisor_knowledge_dir, "ADVISOR_KNOWLEDGE_DIR", "knowledge")


def rules_dir() -> Path:
    return _data_dir(settings().advisor_rules_dir, "ADVISOR_RULES_DIR", "rules")


DB_URL_SCHEMES = ("postgresql://", "postgres://")


def db_target() -> Path | str:
    """ADVISOR_DB as the stores take it: a `postgresql://` URL (str) as given, else the SQLite file (db_path)."""
    value = settings().advisor_db
    return value if isinstance(value, str) else db_path()


def db_path() -> Path:
    """ADVISOR_DB, else a per-user file under XDG_DATA_HOME (sessions and the audit log share it)."""
    path = settings().advisor_db
    if isinstance(path, str):
        raise ConfigError("ADVISOR_DB is a PostgreSQL URL, and this needs an SQLite file",
                          fix="run it with ADVISOR_DB set to an SQLite file path")
    if path is None:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
        path = base / "gpu-advisor" / "advisor.db"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the folder for the database {path}: {exc.strerror}",
                          fix="set ADVISOR_DB to a writable file path") from exc
    return path


def default_provider() -> str:
    return settings().advisor_default_provider or DEFAULT_PROVIDER


def slash_command() -> str:
    cmd = settings().advisor_slash_command.strip()
    if not cmd.startswith("/") or " " in cmd or len(cmd) > 32:
        raise ConfigError(f"ADVISOR_SLASH_COMMAND={cmd!r} is not a slash command",
                          fix="use a single word starting with '/', e.g. /gpu-advisor")
    return cmd


def local_prices_file() -> Path | None:
    """An operator's own prices (git-ignored) override list and indicative prices."""
    configured = settings().advisor_prices_file
    if configured is not None:
        return configured
    try:
        path = knowledge_dir() / "local" / "prices.yaml"
    except ConfigError:
        return None
    return path if path.exists() else None


def price_max_age_days() -> int:
    """ADVISOR_PRICE_MAX_AGE_DAYS (default 90): a price older than this is flagged in answers and in `kb audit`."""
    days = settings().advisor_price_max_age_days
    if days < 0:
        raise ConfigError(f"ADVISOR_PRICE_MAX_AGE_DAYS={days} is not a number of days",
                          fix="set a whole number of days, e.g. ADVISOR_PRICE_MAX_AGE_DAYS=90")
    return days
