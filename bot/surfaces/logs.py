"""Logging for every process of gpu-advisor: text for people, JSON lines for log collectors, never a secret.

`setup_logging()` configures the root logger once per process (calling it again replaces its own handler, it
does not add a second one):

- format: `ADVISOR_LOG_FORMAT=text` (default; `2026-03-14T09:26:53.120Z INFO gpu_advisor.slack: message`) or
  `json` (one object per line: ts, level, logger, msg, plus exc and any `extra=` fields), or the `json` argument;
- level: `ADVISOR_LOG_LEVEL` (DEBUG, INFO, WARNING, ERROR; default INFO), or the `level` argument;
- redaction: every record, whatever logger it comes from, passes a filter that replaces anything shaped like a
  Slack token (`xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`, `xapp-`, `xoxe-`, `xoxe.xoxp-`) by `[redacted token]`
  and the values of SLACK_BOT_TOKEN, SLACK_APP_TOKEN and SLACK_SIGNING_SECRET (and any `secrets=` passed in) by
  `[redacted]`: in the message, its arguments, the traceback and extra fields. The formatters redact their final
  line once more, so a secret inside an object's repr cannot slip through either.

Standard library only; nothing here imports Slack or click.
"""
from __future__ import annotations

import datetime as dt
import json as jsonlib
import logging
import os
import re
import sys
from typing import Any, Iterable, TextIO

from bot.records.errors import ConfigError

__all__ = ["setup_logging", "RedactingFilter", "JsonFormatter", "TextFormatter", "redact", "LEVELS", "FORMATS"]

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
FORMATS = ("text", "json")
SECRET_VARS = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET")

# Slack token shapes: bot/user/app-level/refresh/legacy tokens. The body is what Slack uses: letters, digits, '-'.
TOKEN_RE = re.compile(r"(?<![A-Za-z0-9])(?:xox[abposre](?:\.xox[bp])?|xapp)-[A-Za-z0-9-]+")
TOKEN_MARK = "[redacted token]"
SECRET_MARK = "[redacted]"

# LogRecord attributes that are not `extra=` fields (for the JSON formatter).
_STANDARD = set(vars(logging.LogRecord("x", logging.INFO, "x", 0, "x", None, None))) | {"message", "asctime"}


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with the given secret values and anything shaped like a Slack token replaced."""
    for s in secrets:
        if s:
            text = text.replace(s, SECRET_MARK)
    return TOKEN_RE.sub(TOKEN_MARK, text)


def _env_secrets() -> list[str]:
    # Short values are not secrets worth a blanket replace (and would mangle ordinary words).
    return [v.strip() for v in (os.environ.get(n) or "" for n in SECRET_VARS) if len(v.strip()) >= 8]


class RedactingFilter(logging.Filter):
    """Redacts a record in place before any handler formats it: message + args, traceback, stack, extras."""

    def __init__(self, secrets: Iterable[str] = ()):
        super().__init__()
        self.secrets = sorted({s for s in secrets if s and len(s) >= 8}, key=len, reverse=True)

    def redact(self, value: Any) -> Any:
        if isinstance(value, str):
            return redact(value, self.secrets)
        if isinstance(value, dict):
            return {k: self.redact(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.redact(v) for v in value)
        return value

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 -- a bad format string: keep the raw text, redacted
            message = str(record.msg)
        record.msg, record.args = self.redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        for key, value in list(vars(record).items()):
            if key not in _STANDARD:
                setattr(record, key, self.redact(value))
        return True


def _utc(record: logging.LogRecord) -> str:
    t = dt.datetime.fromtimestamp(record.created, dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(record.msecs):03d}Z"


class TextFormatter(logging.Formatter):
    """`2026-03-14T09:26:53.120Z INFO gpu_advisor.slack: message` (+ traceback), UTC, redacted."""

    def __init__(self, secrets: Iterable[str] = ()):
        super().__init__()
        self.secrets = list(secrets)

    def format(self, record: logging.LogRecord) -> str:
        line = f"{_utc(record)} {record.levelname} {record.name}: {record.getMessage()}"
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line += "\n" + record.exc_text
        if record.stack_info:
            line += "\n" + self.formatStack(record.stack_info)
        return redact(line, self.secrets)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts (UTC), level, logger, msg, and exc / stack / extra fields when present."""

    def __init__(self, secrets: Iterable[str] = ()):
        super().__init__()
        self.secrets = list(secrets)

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"ts": _utc(record), "level": record.levelname, "logger": record.name,
                               "msg": record.getMessage()}
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            out["exc"] = record.exc_text
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in out and not key.startswith("_"):
                out[key] = value
        return redact(jsonlib.dumps(out, ensure_ascii=False, default=str), self.secrets)


def _choice(value: str | None, env: str, allowed: tuple[str, ...], default: str, upper: bool) -> str:
    raw = value if value is not None else os.environ.get(env)
    raw = (raw or "").strip()
    if not raw:
        return default
    norm = raw.upper() if upper else raw.lower()
    if norm not in allowed:
        raise ConfigError(f"{env}={raw!r} is not one of {', '.join(allowed)}", fix=f"set {env} to one of "
                          f"{', '.join(allowed)}, or unset it (default {default})")
    return norm


def setup_logging(json: bool | None = None, level: str | None = None, secrets: Iterable[str] = (),
                  stream: TextIO | None = None) -> logging.Handler:
    """Configure the root logger: one stderr handler (ours), the format and level asked for, redaction on.

    `json` None reads ADVISOR_LOG_FORMAT; `level` None reads ADVISOR_LOG_LEVEL. Raises ConfigError for a value
    that is neither. Other handlers already on the root logger keep working and get the redacting filter too.
    Returns the handler (tests point `stream` at a buffer)."""
    fmt = ("json" if json else "text") if json is not None else _choice(None, "ADVISOR_LOG_FORMAT", FORMATS,
                                                                        "text", upper=False)
    lvl = _choice(level, "ADVISOR_LOG_LEVEL", LEVELS, "INFO", upper=True)
    values = [*_env_secrets(), *(s for s in secrets if s)]
    flt = RedactingFilter(values)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter(flt.secrets) if fmt == "json" else TextFormatter(flt.secrets))
    handler.addFilter(flt)
    handler._gpu_advisor = True                           # type: ignore[attr-defined]
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_gpu_advisor", False):
            root.removeHandler(old)
        else:
            for f in [f for f in old.filters if isinstance(f, RedactingFilter)]:
                old.removeFilter(f)
            old.addFilter(flt)
    root.addHandler(handler)
    root.setLevel(lvl)
    logging.captureWarnings(True)
    return handler
