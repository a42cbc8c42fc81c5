"""A stand-in for the Slack Web API on loopback: records every call and rejects what Slack would reject.

Serves `POST /api/<method>` (point SLACK_API_BASE_URL at `stub.api_url`) and `POST /response/<id>` (use
`stub.response_url(id)` as a slash command's or button's response_url). Each call is recorded as a `Call`
(method, path, headers, body, answer). Stdlib only; one instance per test module, reset between tests.

What it rejects, as Slack does (https://docs.slack.dev/reference/block-kit/blocks and the method pages; every block
is also parsed and validated with slack_sdk's typed models, `sdk_problem`):
- a wrong or missing bot token: `invalid_auth` / `not_authed`;
- chat.postMessage / chat.update without `channel` (`channel_not_found`), without text or blocks (`no_text`),
  with text over 40,000 characters (`msg_too_long`);
- blocks Slack refuses (`invalid_blocks`): more than 50, unknown type, section text empty or over 3000, more
  than 10 fields or one over 2000, header not plain_text or over 150, context with 0 or more than 10 elements,
  actions with more than 25 elements, button text over 75 or value over 2000, duplicate block_id or action_id,
  block_id or action_id over 255;
- blocks holding more than 12,000 characters of text in all (`msg_blocks_too_long`, the undocumented
  cumulative limit reported by Slack engineers);
- stricter than Slack on purpose: blocks without a non-empty top-level `text` fallback are rejected
  (`missing_fallback_text`); Slack only warns, but our contract says every message carries one.
The same block checks apply to response_url posts (answered 400 with the error, as Slack's webhooks do).
Test controls: `ratelimit(method, times, retry_after)` answers 429 + Retry-After; `fail(method, error)` answers
`ok: false` with that error once; `http_error(method, status, times)` answers HTTP 500/503 `times` times;
`delay(method, seconds)` makes a method slow (0 again to stop); `wait_for(pred, timeout)` polls the record.
Many workspaces: `add_workspace(team, token)` makes another bot token valid (auth.test answers its team);
`authorize_code(team, token)` returns a one-time code that `oauth.v2.access` exchanges (with the app's client id
and secret, as HTTP Basic auth) for that workspace's bot token, as Slack's redirect to the app would carry it.
`views.open` (a modal: the workspace settings) needs a trigger_id and a modal view with a title and valid blocks. `apps.connections.open` (Socket
Mode) answers `invalid_auth` unless `socket_url` is set (to a tests/socket_stub.py server's `url`) and the call
carries the app token; then it answers that URL.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qsl

REPO = Path(__file__).resolve().parent.parent
BOT_TOKEN = "xoxb-1111-2222-stubtokenvalue"
APP_TOKEN = "xapp-1-A111-2222-stubapptoken"
TEAM_ID = "T0TEST"
BOT_USER_ID = "UBOTSELF"
BOT_ID = "BBOTSELF"
CLIENT_ID = "1111111111.2222222222"
CLIENT_SECRET = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"

BLOCK_TYPES = {"section", "header", "context", "actions", "divider", "image", "rich_text", "markdown", "input",
               "file", "video"}
MAX_BLOCKS, SECTION_MAX, HEADER_MAX, FIELDS_MAX, FIELD_MAX = 50, 3000, 150, 10, 2000
CONTEXT_MAX, ACTIONS_MAX, BUTTON_TEXT_MAX, VALUE_MAX, ID_MAX = 10, 25, 75, 2000, 255
TEXT_MAX, BLOCKS_TEXT_MAX = 40000, 12000
# select menus, options and views (slack_sdk.models: StaticSelectElement.options_max_length, Option.label/value,
# placeholder_max_length; View.blocks_max_length for a Home tab)
OPTIONS_MAX, OPTION_TEXT_MAX, OPTION_VALUE_MAX, PLACEHOLDER_MAX, VIEW_BLOCKS_MAX = 100, 75, 150, 150, 100


@dataclass
class Call:
    method: str                     # "chat.postMessage", or "response_url" for /response/<id>
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    status: int = 200
    answer: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)

    @property
    def ok(self) -> bool:
        return self.status == 200 and bool(self.answer.get("ok", True))


def _text_len(node: Any) -> int:
    if isinstance(node, dict):
        return sum(len(v) if k == "text" and isinstance(v, str) else _text_len(v) for k, v in node.items())
    if isinstance(node, list):
        return sum(_text_len(x) for x in node)
    return 0


def _text_obj(obj: Any, limit: int, kinds: tuple[str, ...] = ("plain_text", "mrkdwn")) -> str | None:
    if not isinstance(obj, dict) or obj.get("type") not in kinds:
        return f"text object type must be one of {kinds}"
    text = obj.get("text")
    if not isinstance(text, str) or not text:
        return "text must be a non-empty string"
    if len(text) > limit:
        return f"text is {len(text)} characters, more than {limit}"
    return None


def _select(e: dict[str, Any]) -> str | None:
    """A static_select: 1-100 options, each plain_text up to 75 with a value up to 150; a placeholder up to 150."""
    if "placeholder" in e and (err := _text_obj(e["placeholder"], PLACEHOLDER_MAX, ("plain_text",))):
        return f"placeholder: {err}"
    options = e.get("options")
    if not isinstance(options, list) or not options or len(options) > OPTIONS_MAX:
        return f"1 to {OPTIONS_MAX} options"
    for o in options + ([e["initial_option"]] if e.get("initial_option") else []):
        if err := _text_obj(o.get("text"), OPTION_TEXT_MAX, ("plain_text",)):
            return f"option: {err}"
        if not isinstance(o.get("value"), str) or not o["value"] or len(o["value"]) > OPTION_VALUE_MAX:
            return f"option value must be 1 to {OPTION_VALUE_MAX} characters"
    if e.get("initial_option") and e["initial_option"] not in options:
        return "initial_option is not one of the options"
    return None


def sdk_problem(block: dict[str, Any]) -> str | None:
    """What slack_sdk's typed models say is wrong with a block (their validators carry Slack's documented limits:
    text lengths, element counts, ids), or None. A block type they do not know is unknown to Slack too."""
    from slack_sdk.errors import SlackObjectFormationError
    from slack_sdk.models.blocks import Block
    try:
        typed = Block.parse(block)
        if typed is None or type(typed) is Block:
            return "unknown block type (slack_sdk)"
        typed.to_dict()                # validates the block and every element and text object inside it
    except (SlackObjectFormationError, KeyError, TypeError, ValueError) as exc:
        return f"slack_sdk: {exc}"
    return None


def validate_blocks(blocks: Any, max_blocks: int = MAX_BLOCKS) -> str | None:
    """None when Slack would accept these blocks, else the reason (what Slack calls invalid_blocks): slack_sdk's
    models first, then the limits they do not check (duplicate ids, select options, the whole-message count)."""
    if not isinstance(blocks, list):
        return "blocks must be a list"
    for i, b in enumerate(blocks):
        if isinstance(b, dict) and (reason := sdk_problem(b)):
            return f"block {i} ({b.get('type')}): {reason}"
    if len(blocks) > max_blocks:
        return f"{len(blocks)} blocks, more than {max_blocks}"
    block_ids, action_ids = set(), set()
    for i, b in enumerate(blocks):
        where = f"block {i} ({b.get('type') if isinstance(b, dict) else type(b).__name__})"
        if not isinstance(b, dict) or b.get("type") not in BLOCK_TYPES:
            return f"{where}: unknown block type"
        bid = b.get("block_id")
        if bid is not None:
            if not isinstance(bid, str) or not bid or len(bid) > ID_MAX:
                return f"{where}: bad block_id"
            if bid in block_ids:
                return f"{where}: duplicate block_id {bid!r}"
            block_ids.add(bid)
        kind = b["type"]
        if kind == "section":
            if "text" not in b and "fields" not in b:
                return f"{where}: needs text or fields"
            if "text" in b and (err := _text_obj(b["text"], SECTION_MAX)):
                return f"{where}: {err}"
            fields = b.get("fields")
            if fields is not None:
                if not isinstance(fields, list) or not fields or len(fields) > FIELDS_MAX:
                    return f"{where}: 1 to {FIELDS_MAX} fields"
                for f in fields:
                    if err := _text_obj(f, FIELD_MAX):
                        return f"{where}: field: {err}"
        elif kind == "header":
            if err := _text_obj(b.get("text"), HEADER_MAX, ("plain_text",)):
                return f"{where}: {err}"
        elif kind == "context":
            elements = b.get("elements")
            if not isinstance(elements, list) or not elements or len(elements) > CONTEXT_MAX:
                return f"{where}: 1 to {CONTEXT_MAX} elements"
            for e in elements:
                if e.get("type") != "image" and (err := _text_obj(e, SECTION_MAX)):
                    return f"{where}: element: {err}"
        elif kind == "actions":
            elements = b.get("elements")
            if not isinstance(elements, list) or not elements or len(elements) > ACTIONS_MAX:
                return f"{where}: 1 to {ACTIONS_MAX} elements"
            for e in elements:
                aid = e.get("action_id")
                if aid is not None:
                    if not isinstance(aid, str) or not aid or len(aid) > ID_MAX or aid in action_ids:
                        return f"{where}: bad or duplicate action_id {aid!r}"
                    action_ids.add(aid)
                if e.get("type") == "button":
                    if err := _text_obj(e.get("text"), BUTTON_TEXT_MAX, ("plain_text",)):
                        return f"{where}: button: {err}"
                    if "value" in e and (not isinstance(e["value"], str) or len(e["value"]) > VALUE_MAX):
                        return f"{where}: button value over {VALUE_MAX}"
                elif e.get("type") == "static_select":
                    if err := _select(e):
                        return f"{where}: static_select: {err}"
                else:
                    return f"{where}: element type {e.get('type')!r} not checked by this stub"
        if b.get("accessory", {}).get("type") == "static_select" and (err := _select(b["accessory"])):
            return f"{where}: accessory: {err}"
    return None


def check_message(body: dict[str, Any], need_channel: bool = True) -> str | None:
    """The error Slack (or this stub, for the fallback text) gives a message body; None when accepted."""
    if need_channel and not body.get("channel"):
        return "channel_not_found"
    text, blocks = body.get("text"), body.get("blocks")
    if isinstance(blocks, str):
        try:
            blocks = json.loads(blocks)
        except ValueError:
            return "invalid_blocks_format"
    if not text and not blocks:
        return "no_text"
    if text and len(text) > TEXT_MAX:
        return "msg_too_long"
    if blocks is not None:
        if (reason := validate_blocks(blocks)) is not None:
            return f"invalid_blocks: {reason}"
        if _text_len(blocks) > BLOCKS_TEXT_MAX:
            return "msg_blocks_too_long"
        if not (text or "").strip():
            return "missing_fallback_text"
    return None


class SlackStub:
    def __init__(self, bot_token: str = BOT_TOKEN, app_token: str = APP_TOKEN):
        self.bot_token, self.app_token = bot_token, app_token
        self.teams: dict[str, str] = {bot_token: TEAM_ID}     # bot token -> its workspace
        self.codes: dict[str, tuple[str, str]] = {}          # unused OAuth code -> (team, token)
        self.calls: list[Call] = []
        self.messages: list[dict[str, Any]] = []   # what chat.postMessage posted, for conversations.history
        self.socket_url: str | None = None     # a tests/socket_stub.py server's URL, for apps.connections.open
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._ratelimits: dict[str, list[int]] = {}
        self._failures: dict[str, list[str]] = {}
        self._http_errors: dict[str, list[int]] = {}
        self._delays: dict[str, float] = {}
        self._ts = 1_700_000_000.000100
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:   # quiet
                pass

            def do_GET(self) -> None:                 # conversations.history / .replies are GET with a query
                path, _, query = self.path.partition("?")
                self._reply(*stub._answer(path, dict(self.headers), dict(parse_qsl(query, keep_blank_values=True))))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8")
                ctype = self.headers.get("Content-Type") or ""
                try:
                    body = json.loads(raw) if "json" in ctype else dict(parse_qsl(raw, keep_blank_values=True))
                except ValueError:
                    body = {"_raw": raw}
                self._reply(*stub._answer(self.path, dict(self.headers), body))

            def _reply(self, status: int, answer: Any, extra: dict) -> None:
                data = json.dumps(answer).encode() if isinstance(answer, dict) else str(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json" if isinstance(answer, dict) else "text/plain")
                self.send_header("Content-Length", str(len(data)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.api_url = f"{self.base_url}/api/"
        self.thread = threading.Thread(target=self.server.serve_forever, name="slack-stub", daemon=True)
        self.thread.start()

    # ----- controls -----------------------------------------------------------------------------------------
    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self.messages.clear()
            self._ratelimits.clear()
            self._failures.clear()
            self._http_errors.clear()
            self._delays.clear()

    def ratelimit(self, method: str, times: int = 1, retry_after: int = 1, channel: str | None = None) -> None:
        """The next `times` calls of `method` (only those to `channel`, when given) answer 429 + Retry-After."""
        with self._lock:
            self._ratelimits[method] = [times, retry_after, channel]

    def fail(self, method: str, error: str) -> None:
        with self._lock:
            self._failures.setdefault(method, []).append(error)

    def http_error(self, method: str, status: int = 500, times: int = 1) -> None:
        with self._lock:
            self._http_errors[method] = [times, status]

    def delay(self, method: str, seconds: float) -> None:
        with self._lock:
            self._delays[method] = seconds

    def add_workspace(self, team: str, token: str) -> None:
        with self._lock:
            self.teams[token] = team

    def authorize_code(self, team: str, token: str) -> str:
        """The code Slack would put on the redirect after a user approved the install in `team`."""
        import secrets
        code = f"{team}.{secrets.token_hex(8)}"
        with self._lock:
            self.codes[code] = (team, token)
        return code

    def response_url(self, name: str) -> str:
        return f"{self.base_url}/response/{name}"

    # ----- reading the record -------------------------------------------------------------------------------
    def of(self, method: str, ok: bool | None = None) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method and (ok is None or c.ok == ok)]

    def wait_for(self, pred: Callable[["SlackStub"], Any], timeout: float = 10.0) -> Any:
        """Poll until pred(stub) is truthy; its value, or AssertionError naming what was recorded."""
        end = time.monotonic() + timeout
        while True:
            value = pred(self)
            if value:
                return value
            left = end - time.monotonic()
            if left <= 0:
                seen = [(c.method, c.status, c.answer.get("error")) for c in self.of_all()]
                raise AssertionError(f"timed out after {timeout}s; calls recorded: {seen}")
            with self._cond:
                self._cond.wait(min(left, 0.05))

    def of_all(self) -> list[Call]:
        with self._lock:
            return list(self.calls)

    def settle(self, quiet: float = 0.3, timeout: float = 5.0) -> None:
        """Wait until no call has arrived for `quiet` seconds (to assert that nothing more is posted)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                last = self.calls[-1].at if self.calls else 0.0
            if time.monotonic() - last >= quiet:
                time.sleep(quiet)
                with self._lock:
                    if (self.calls[-1].at if self.calls else 0.0) == last:
                        return
            time.sleep(0.05)

    # ----- answering ----------------------------------------------------------------------------------------
    def _record(self, call: Call) -> None:
        with self._cond:
            self.calls.append(call)
            self._cond.notify_all()

    def _answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any, dict]:
        headers = {k.lower(): v for k, v in headers.items()}
        if path.startswith("/response/") and self._delays.get("response_url"):
            time.sleep(self._delays["response_url"])
        if path.startswith("/response/"):
            err = check_message(body, need_channel=False)
            call = Call("response_url", path, headers, body, 400 if err else 200, {"ok": not err, "error": err})
            self._record(call)
            return (400, err, {}) if err else (200, "ok", {})
        method = path.removeprefix("/api/").split("?")[0]
        call = Call(method, path, headers, body)
        with self._lock:
            wait = self._delays.get(method, 0.0)
            broken = self._http_errors.get(method)
            status = broken[1] if broken and broken[0] > 0 else None
            if status:
                broken[0] -= 1
        if wait:
            time.sleep(wait)
        if status:
            call.status, call.answer = status, {"ok": False, "error": f"HTTP {status}"}
            self._record(call)
            return status, "server error", {}
        with self._lock:
            limit = self._ratelimits.get(method)
            if limit and limit[0] > 0 and limit[2] in (None, body.get("channel")):
                limit[0] -= 1
                call.status, call.answer = 429, {"ok": False, "error": "ratelimited"}
                extra = {"Retry-After": str(limit[1])}
            else:
                extra = {}
            failure = self._failures.get(method, []).pop(0) if self._failures.get(method) else None
        if call.status == 429:
            self._record(call)
            return 429, call.answer, extra
        call.answer = failure and {"ok": False, "error": failure} or self._method(method, headers, body)
        self._record(call)
        return 200, call.answer, {}

    def _method(self, method: str, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
        auth = headers.get("authorization", "")
        if method == "oauth.v2.access":
            return self._oauth_access(auth, body)
        token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else body.get("token")
        if not token:
            return {"ok": False, "error": "not_authed"}
        if method == "apps.connections.open":              # Socket Mode: the WebSocket URL, for the app token
            if self.socket_url and token == self.app_token:
                return {"ok": True, "url": self.socket_url}
            return {"ok": False, "error": "invalid_auth"}    # no WebSocket server (socket_url unset), or bad token
        with self._lock:
            team = self.teams.get(token)
        if team is None:
            return {"ok": False, "error": "invalid_auth"}
        if method == "auth.test":
            return {"ok": True, "url": "https://stub.slack.test/", "team": "Test", "user": "gpu-advisor",
                    "team_id": team, "user_id": BOT_USER_ID, "bot_id": BOT_ID, "is_enterprise_install": False}
        if method in ("chat.postMessage", "chat.update", "chat.postEphemeral"):
            if method == "chat.update" and not body.get("ts"):
                return {"ok": False, "error": "message_not_found"}
            if method == "chat.postEphemeral" and not body.get("user"):
                return {"ok": False, "error": "user_not_in_channel"}
            err = check_message(body)
            if err:
                return {"ok": False, "error": err.split(":")[0],
                        "response_metadata": {"messages": [f"[ERROR] {err}"]}}
            with self._lock:
                self._ts = max(self._ts + 0.0001, time.time())     # real clock, as Slack's ts
                ts = body.get("ts") if method == "chat.update" else f"{self._ts:.6f}"
                if method == "chat.postMessage":
                    self.messages.append({"channel": body["channel"], "ts": ts, "text": body.get("text"),
                                          "thread_ts": body.get("thread_ts"), "metadata": body.get("metadata")})
            return {"ok": True, "channel": body["channel"], "ts": ts,
                    "message": {"text": body.get("text"), "ts": ts, "bot_id": BOT_ID}}
        if method == "views.publish":                      # the App Home tab
            view = body.get("view")
            if isinstance(view, str):
                view = json.loads(view)
            if not body.get("user_id"):
                return {"ok": False, "error": "invalid_arguments"}
            if not isinstance(view, dict) or view.get("type") != "home":
                return {"ok": False, "error": "invalid_arguments"}
            if err := validate_blocks(view.get("blocks"), VIEW_BLOCKS_MAX):
                return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": [err]}}
            return {"ok": True, "view": {**view, "id": "V0HOME"}}
        if method == "views.open":                         # a modal (the workspace settings)
            view = body.get("view")
            if isinstance(view, str):
                view = json.loads(view)
            if not body.get("trigger_id"):
                return {"ok": False, "error": "invalid_trigger_id"}
            if not isinstance(view, dict) or view.get("type") != "modal" or not view.get("title"):
                return {"ok": False, "error": "invalid_arguments"}
            if err := validate_blocks(view.get("blocks"), VIEW_BLOCKS_MAX):
                return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": [err]}}
            return {"ok": True, "view": {**view, "id": "V0MODAL"}}
        if method in ("conversations.history", "conversations.replies"):
            return self._history(method, body)
        return {"ok": False, "error": "unknown_method"}

    def _oauth_access(self, auth: str, body: dict[str, Any]) -> dict[str, Any]:
        """oauth.v2.access: the app's credentials (HTTP Basic, as slack_sdk sends them, or in the body) and an
        unused code -> the workspace's bot token (https://docs.slack.dev/reference/methods/oauth.v2.access)."""
        import base64
        client_id, client_secret = body.get("client_id"), body.get("client_secret")
        if auth.startswith("Basic "):
            client_id, _, client_secret = base64.b64decode(auth[6:]).decode().partition(":")
        if (client_id, client_secret) != (CLIENT_ID, CLIENT_SECRET):
            return {"ok": False, "error": "invalid_client_id" if client_id != CLIENT_ID else "bad_client_secret"}
        with self._lock:
            found = self.codes.pop(str(body.get("code")), None)
            if found:
                self.teams[found[1]] = found[0]
        if found is None:
            return {"ok": False, "error": "invalid_code"}
        team, token = found
        return {"ok": True, "app_id": "A0GPUADV", "authed_user": {"id": f"U{team}ADMIN"},
                "scope": "app_mentions:read,channels:history,chat:write,commands", "token_type": "bot",
                "access_token": token, "bot_user_id": BOT_USER_ID, "team": {"id": team, "name": f"Team {team}"},
                "enterprise": None, "is_enterprise_install": False}

    def _history(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        """Messages the bot posted (newest first), with their metadata when include_all_metadata is set."""
        channel, oldest = body.get("channel"), float(body.get("oldest") or 0)
        with self._lock:
            found = [m for m in self.messages if m["channel"] == channel and float(m["ts"]) >= oldest and
                     (m["thread_ts"] is None if method == "conversations.history"
                      else body.get("ts") in (m["thread_ts"], m["ts"]))]
        keep = str(body.get("include_all_metadata")).lower() in ("1", "true")
        return {"ok": True, "messages": [{"type": "message", "ts": m["ts"], "text": m["text"], "bot_id": BOT_ID,
                                          **({"metadata": m["metadata"]} if keep and m["metadata"] else {})}
                                         for m in reversed(found)]}


# ----- the other direction: requests as Slack sends them to the app ----------------------------------------------
def sign(body: str, secret: str, timestamp: int | None = None) -> dict[str, str]:
    """Slack's v0 request signature headers for `body` (https://docs.slack.dev/authentication/verifying-requests-from-slack/)."""
    import hashlib
    import hmac
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def send(url: str, body: str, content_type: str, headers: dict[str, str] | None = None,
         timeout: float = 10.0) -> tuple[int, str, float]:
    """POST like Slack does; (HTTP status, response body, seconds until the response)."""
    import urllib.error
    import urllib.request
    req = urllib.request.Request(url, data=body.encode(), method="POST",
                                 headers={"Content-Type": content_type, **(headers or {})})
    start = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read().decode(), time.monotonic() - start
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), time.monotonic() - start


def event_callback(event: dict[str, Any], event_id: str, team: str = TEAM_ID) -> str:
    return json.dumps({
        "token": "legacy-verification-token", "team_id": team, "api_app_id": "A0GPUADV", "event": event,
        "type": "event_callback", "event_id": event_id, "event_time": int(time.time()),
        "authorizations": [{"team_id": team, "user_id": BOT_USER_ID, "is_bot": True, "is_enterprise_install": False}],
    })


class BotProcess:
    """A `gpu-advisor serve` subprocess under test: its stderr lines (collected by a thread) and its database."""

    wait_timeout = 10.0

    def __init__(self, proc, log: list[str], db):
        self.proc, self.log, self.db = proc, log, db

    def wait_log(self, pattern: str, timeout: float | None = None) -> str:
        end = time.monotonic() + (timeout or self.wait_timeout)
        while time.monotonic() < end:
            for line in list(self.log):
                if re.search(pattern, line):
                    return line
            time.sleep(0.05)
        raise AssertionError(f"no log line matching {pattern!r}; last lines: {self.log[-10:]}")

    def audit(self, **where) -> list[dict]:
        from bot.store.audit import AuditLog
        with AuditLog(self.db) as log:
            rows = log.list(limit=None)
        return [r for r in rows if all(r.get(k) == v for k, v in where.items())]


def bot_env(**settings: str) -> dict[str, str]:
    """The environment of a `gpu-advisor serve` under test: none of the caller's SLACK_/ADVISOR_ settings and no
    proxy (slack_sdk honours HTTP(S)_PROXY but not NO_PROXY: nothing may sit between the bot and the loopback stub),
    the test run's cache folder kept (conftest.py keeps caches out of ~/.cache), then `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "ADVISOR_"))
           and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env["ADVISOR_CACHE_DIR"] = os.environ.get("ADVISOR_CACHE_DIR", "off")
    env.update(PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", NO_PROXY="127.0.0.1,localhost",
               no_proxy="127.0.0.1,localhost")
    env.update(settings)
    return env


def start_http(env: dict[str, str], *args: str, timeout: float = 30.0, what: str = "the bot"
               ) -> tuple[subprocess.Popen, str, list[str]]:
    """`gpu-advisor serve --http` on 127.0.0.1 with `env` (bot_env) and extra `args`, its output collected line by
    line: (process, base URL, log) once it says where it listens; killed, and RuntimeError with its log, if it
    exits or stays silent for `timeout` seconds."""
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--http", "--host", "127.0.0.1", *args],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log: list[str] = []
    threading.Thread(target=lambda: [log.append(line.rstrip("\n")) for line in proc.stdout], daemon=True).start()
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        for line in list(log):
            if m := re.search(r"listening on (http://127\.0\.0\.1:\d+)", line):
                return proc, m.group(1), log
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{what} did not start:\n" + "\n".join(log))
