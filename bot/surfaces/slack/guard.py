"""The door of `POST /slack/events`: the signature and its timestamp are checked on the raw bytes before anything
else is parsed; then the body must be UTF-8 and the parts the app reads must have the shape Slack documents.

Why here and not in Bolt: Bolt decoded, split and JSON-parsed a request before verifying it, so 9 kinds of
malformed unsigned request (bad JSON, invalid UTF-8, a non-numeric timestamp...) got HTTP 500 and a 2.8 KB
traceback each, and a signed event whose `event` was a string crashed a listener. Now:
- unsigned, badly signed, or stale (more than 5 minutes, Slack's rule) -> 401, one log line, nothing parsed;
- signed but not UTF-8, not JSON / form, or not the documented shape -> 200 and a warning: Slack does not
  retry it, and nothing in the app sees it (Slack itself never sends such a thing; a bug or an attack does);
- text that Slack may legitimately carry but Python cannot store (lone UTF-16 surrogates) is replaced by U+FFFD
  (`scrub`), at intake, so the inbox and the audit log always hold valid UTF-8.
Signature scheme: https://docs.slack.dev/authentication/verifying-requests-from-slack/ (v0, HMAC-SHA256 over
`v0:{timestamp}:{body}`, timestamps older than 5 minutes rejected), as slack_sdk's SignatureVerifier does.
"""
from __future__ import annotations

import hashlib
import hmac
import io
import json
import logging
import time
from typing import Any, Callable
from urllib.parse import parse_qs

from pydantic import BaseModel, ConfigDict, ValidationError

log = logging.getLogger("gpu_advisor.slack")

MAX_BODY = 1 << 20
MAX_AGE_S = 5 * 60


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class MessageEvent(_Loose):
    """The fields of a `message` / `app_mention` event the app reads (anything else passes through unread)."""
    type: str
    user: str | None = None
    channel: str | None = None
    channel_type: str | None = None
    ts: str | None = None
    thread_ts: str | None = None
    text: str | None = None
    subtype: str | None = None
    bot_id: str | None = None
    tab: str | None = None


class EventEnvelope(_Loose):
    type: str
    event_id: str | None = None
    team_id: str | None = None
    event: dict[str, Any] | None = None


class Named(_Loose):
    id: str | None = None


class ActionPayload(_Loose):
    """block_actions / message_action (shortcut) payloads: who, where, which button."""
    type: str
    user: Named | None = None
    team: Named | None = None
    channel: Named | None = None
    container: dict[str, Any] | None = None
    message: dict[str, Any] | None = None
    actions: list[dict[str, Any]] | None = None
    response_url: str | None = None


class Refused(Exception):
    """The request is answered `status` without reaching Bolt; `why` goes to the log (one line)."""

    def __init__(self, status: str, why: str):
        super().__init__(why)
        self.status, self.why = status, why


def scrub(value: Any) -> Any:
    """Strings (also inside dicts and lists) with lone surrogates replaced by U+FFFD, so they encode as UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def verify(body: bytes, timestamp: str | None, signature: str | None, secret: str,
           now: Callable[[], float] = time.time) -> None:
    """Raise Refused('401 ...') unless `signature` is Slack's v0 signature of `body` at a fresh `timestamp`."""
    if not timestamp or not signature:
        raise Refused("401 Unauthorized", "no Slack signature headers")
    if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
        raise Refused("401 Unauthorized", "the request timestamp is not a number")
    if abs(now() - int(timestamp)) > MAX_AGE_S:
        raise Refused("401 Unauthorized", "stale request timestamp (more than 5 minutes off)")
    base = b"v0:" + timestamp.encode() + b":" + body
    expected = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        raise Refused("401 Unauthorized", "bad signature")


def check_shape(text: str, content_type: str) -> None:
    """Raise Refused('200 OK', why) when a signed body is not the shape the app reads."""
    try:
        if "json" in content_type:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise Refused("200 OK", "the JSON body is not an object")
            envelope = EventEnvelope.model_validate(data)
            if envelope.type == "event_callback":
                if envelope.event is None:
                    raise Refused("200 OK", "an event_callback without an event object")
                if envelope.event.get("type") in ("message", "app_mention"):
                    MessageEvent.model_validate(envelope.event)
            return
        form = parse_qs(text, keep_blank_values=True, strict_parsing=False)
        if "payload" in form:
            payload = json.loads(form["payload"][0])
            if not isinstance(payload, dict):
                raise Refused("200 OK", "the interaction payload is not an object")
            ActionPayload.model_validate(payload)
    except ValueError as exc:                           # JSON errors and pydantic's ValidationError
        kind = "schema" if isinstance(exc, ValidationError) else "JSON"
        raise Refused("200 OK", f"{kind} mismatch: {_short(exc)}") from None


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(map(str, first.get('loc', ())))}: {first.get('msg')}"
    return str(exc).splitlines()[0][:120]


def guarded(inner: Callable, secret: str | None) -> Callable:
    """WSGI middleware for POST /slack/events: verify, decode and shape-check, then hand the same bytes on."""

    def application(environ: dict, start_response: Callable) -> Any:
        try:
            body = _read(environ)
            if secret:
                verify(body, environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP"), environ.get("HTTP_X_SLACK_SIGNATURE"),
                       secret)
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                raise Refused("200 OK", "the body is not valid UTF-8") from None
            check_shape(text, environ.get("CONTENT_TYPE") or "")
        except Refused as refused:
            level = logging.WARNING if refused.status.startswith("200") else logging.INFO
            log.log(level, "request to /slack/events %s: %s", "ignored" if level == logging.WARNING else "refused",
                    refused.why)
            data = b"" if refused.status.startswith("200") else b'{"error": "invalid request"}'
            start_response(refused.status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
            return [data]
        environ["wsgi.input"], environ["CONTENT_LENGTH"] = io.BytesIO(body), str(len(body))
        return inner(environ, start_response)

    return application


def _read(environ: dict) -> bytes:
    raw = environ.get("CONTENT_LENGTH") or "0"
    if not raw.isdigit():
        raise Refused("400 Bad Request", "Content-Length is not a number")
    length = int(raw)
    if length > MAX_BODY:
        raise Refused("413 Payload Too Large", f"body of {length} bytes")
    return environ["wsgi.input"].read(length) if length else b""
