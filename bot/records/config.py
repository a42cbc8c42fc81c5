"""Settings from the environment, in one place, validated once (DESIGN.md "Environment")."""
from __future__ import annotations

import os
from pathlib import Path

from bot.records.errors import ConfigError

_REPO = Path(__file__).resolve().parents[2]


def _data_dir(env: str, name: str) -> Path:
    """knowledge/ and rules/ beside the package: a checkout, an installed wheel (shared data) or a container."""
    value = os.environ.get(env)
    if value:
        path = Path(value).expanduser()
        if not path.is_dir():
            raise ConfigError(f"{env}={value} is not a directory",
                              fix=f"point {env} at the folder holding the {name} YAML files, or unset it")
        return path
    candidates = [_REPO / name, Path(os.sys.prefix) / "share" / "gpu-advisor" / name, Path("/app") / name]
    for path in candidates:
        if path.is_dir():
            return path
    raise ConfigError(f"no {name}/ folder found (looked in {', '.join(str(c) for c in candidates)})",
                      fix=f"set {env} to the folder holding the {name} YAML files")


def knowledge_dir() -> Path:
    return _data_dir("ADVISOR_KNOWLEDGE_DIR", "knowledge")


def rules_dir() -> Path:
    return _data_dir("ADVISOR_RULES_DIR", "rules")


def db_path() -> Path:
    """ADVISOR_DB, else a per-user file under XDG_DATA_HOME (sessions and the audit log share it)."""
    value = os.environ.get("ADVISOR_DB")
    if value:
        path = Path(value).expanduser()
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
        path = base / "gpu-advisor" / "advisor.db"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the folder for the database {path}: {exc.strerror}",
                          fix="set ADVISOR_DB to a writable file path") from exc
    return path


def default_provider() -> str:
    return os.environ.get("ADVISOR_DEFAULT_PROVIDER", "huaweicloud").strip().lower() or "huaweicloud"


def slash_command() -> str:
    value = os.environ.get("ADVISOR_SLASH_COMMAND", "/gpu-advisor").strip()
    if not value.startswith("/") or " " in value or len(value) > 32:
        raise ConfigError(f"ADVISOR_SLASH_COMMAND={value!r} is not a slash command",
                          fix="use a single word starting with '/', e.g. /gpu-advisor")
    return value


def local_prices_file() -> Path | None:
    """An operator's own prices (git-ignored) override list and indicative prices."""
    value = os.environ.get("ADVISOR_PRICES_FILE")
    if value:
        return Path(value).expanduser()
    try:
        path = knowledge_dir() / "local" / "prices.yaml"
    except ConfigError:
        return None
    return path if path.exists() else None


def price_max_age_days() -> int:
    """ADVISOR_PRICE_MAX_AGE_DAYS (default 90): a price older than this is flagged in answers and in `kb audit`."""
    value = os.environ.get("ADVISOR_PRICE_MAX_AGE_DAYS", "90").strip()
    try:
        days = int(value)
    except ValueError:
        days = -1
    if days < 0:
        raise ConfigError(f"ADVISOR_PRICE_MAX_AGE_DAYS={value!r} is not a number of days",
                          fix="set a whole number of days, e.g. ADVISOR_PRICE_MAX_AGE_DAYS=90")
    return days
