"""The Slack surface: a Bolt app that turns DMs, @mentions, the slash command and follow-up buttons into turns.

Only this module (and bot/surfaces/slack/) imports Slack. Each listener translates a payload into one
`Service.ask` call (session load/save + audit record) and the reply back into Block Kit; the core never sees
Slack. `build_app(settings, service)` makes the app; `run(mode, host, port)` serves it (Socket Mode, or HTTP:
Bolt's WSGI adapter under waitress with `POST /slack/events` and `GET /healthz`).

Where conversations live (the session key is slack:team:channel:thread:user, see bot/store/sessions.py):
- DM: one conversation per DM channel (thread: none); the answer goes where the message was.
- @mention: one conversation per thread; the answer goes in the thread of the mention
  (`thread_ts = event.thread_ts or event.ts`), and a mention inside that thread continues it.
- slash command: one conversation per channel and user; answers are ephemeral (only the asker sees them).
- follow-up button: continues the conversation of the message it is on. The actions block's block_id carries
  that conversation (kind, session thread, reply thread, owner), so the click needs no lookup. Only the
  person whose question it was can answer it; anyone else is told, privately, to ask their own.
Idempotency: an event is answered once per `event_id` and once per message (`msg:{channel}:{ts}`, which also
collapses a mention delivered as both `message` and `app_mention`); a follow-up message is answered once
(`act:{channel}:{message_ts}`). Messages from bots (bot_id, bot_message, the app itself) and edits are ignored.
"""
from __future__ import annotations

import json
import logging
import re
import signal
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler

from bot.surfaces.slack import text as T
from bot.records.errors import AdvisorError, ConfigError
from bot.render.blocks import blocks as render_blocks
from bot.render.blocks import escape
from bot.surfaces.slack.format import Message, clip, fit, lang_of, split, to_plain, with_fallbacks
from bot.surfaces.slack.controls import answer_controls
from bot.surfaces.slack.interactions import Interactions
from bot.surfaces.slack.views import explain_messages, history_messages
from bot.store.slack_state import SlackState
from bot.surfaces.slack.settings import SlackSettings, setup_logging
from bot.render.templates import Templates, default_templates

log = logging.getLogger("gpu_advisor.slack")

FOLLOWUP_ACTION = re.compile(r"^followup_choice_\d+$")
_SLACK_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_ANSWERED_SUBTYPES = (None, "thread_broadcast", "file_share")
_BLOCK_ERRORS = {"invalid_blocks", "invalid_blocks_format", "msg_blocks_too_long", "too_many_blocks"}


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


class SlackBot(Interactions):
    """The listeners. Plain methods: Bolt injects ack/respond/client/context by parameter name."""

    def __init__(self, settings: SlackSettings, service: Any, templates: Templates | None = None):
        self.settings = settings
        self.service = service
        self.t = templates or default_templates()
        self.cmd = settings.slash_command
        self.state = SlackState(service.audit.path)

    def register(self, app: App) -> App:
        app.event("app_mention")(self.on_mention)
        app.event("message")(self.on_message)           # every subtype: edits and joins are acked and ignored
        app.command(self.cmd)(self.on_command)
        app.action(FOLLOWUP_ACTION)(self.on_followup)
        self.register_interactions(app)
        app.error(self.on_error)
        return app

    # ----- events ----------------------------------------------------------------------------------------------
    def on_message(self, body: dict, event: dict, context: Any, request: Any) -> None:
        channel = event.get("channel") or ""
        if event.get("channel_type") == "im" or channel.startswith("D"):
            self._on_event(body, event, context, request, "dm")
        elif self._thread_follow_up(event, context):
            self._on_event(body, event, context, request, "mention")
        # other channel messages: one that mentions the bot also arrives as app_mention, answered there

    def _thread_follow_up(self, event: dict, context: Any) -> bool:
        """A reply in a thread the bot has answered in continues without a new @mention, unless it mentions
        someone else (people talking to each other in the thread)."""
        thread, ts = event.get("thread_ts"), event.get("ts")
        if not thread or thread == ts or not event.get("channel"):
            return False
        others = set(re.findall(r"<@([A-Z0-9]+)", event.get("text") or "")) - {getattr(context, "bot_user_id", None)}
        return not others and self.state.in_thread(event["channel"], thread)

    def on_mention(self, body: dict, event: dict, context: Any, request: Any) -> None:
        kind = "dm" if (event.get("channel") or "").startswith("D") else "mention"
        self._on_event(body, event, context, request, kind)

    def _on_event(self, body: dict, event: dict, context: Any, request: Any, kind: str) -> None:
        user, channel, ts = event.get("user"), event.get("channel"), event.get("ts")
        if self._from_bot(event, context):
            log.debug("ignored a message from a bot in %s", channel)
            return
        if event.get("subtype") not in _ANSWERED_SUBTYPES or not (user and channel and ts):
            return
        event_id = body.get("event_id")
        retry = (request.headers.get("x-slack-retry-num") or [None])[0] if request is not None else None
        if event_id and not self.service.audit.claim_event(event_id):
            log.info("event %s already handled (retry %s, %s): not answered again", event_id, retry,
                     (request.headers.get("x-slack-retry-reason") or [None])[0] if request is not None else None)
            return
        if not self.service.audit.claim_event(f"msg:{channel}:{ts}"):
            log.info("message %s in %s already answered (event %s): not answered again", ts, channel, event_id)
            return
        if kind == "mention":
            root = event.get("thread_ts") or ts
            place = Place("mention", channel, root, root, user)
        else:
            place = Place("dm", channel, None, event.get("thread_ts"), user)
        team = body.get("team_id") or event.get("team") or context.team_id or ""
        text = to_plain(event.get("text"), context.bot_user_id) or "help"
        if kind == "mention":
            self.state.join_thread(channel, place.session_thread or ts)
        self.answer(text, place, team=team, surface=kind, event_id=event_id, client=context.client)

    @staticmethod
    def _from_bot(event: dict, context: Any) -> bool:
        if event.get("bot_id") or event.get("bot_profile") or event.get("subtype") == "bot_message":
            return True
        me = getattr(context, "bot_user_id", None)
        return bool(me and event.get("user") == me)

    # ----- slash command ----------------------------------------------------------------------------------------
    def on_command(self, ack: Callable, command: dict, respond: Callable, context: Any) -> None:
        text = to_plain(command.get("text"))
        word, _, rest = text.partition(" ")
        lang = lang_of(text)
        user, team, channel = command.get("user_id") or "", command.get("team_id") or "", command.get("channel_id") or ""
        verb = word.lower()
        if verb in ("", "help", "帮助", "?"):
            ack(text=T.say("help", lang, cmd=self.cmd), response_type="ephemeral")
            return
        if verb in ("history", "历史"):
            ack()
            self._respond_all(respond, history_messages(self.service.audit, user, team, lang, self.cmd))
            return
        if verb in ("explain", "解释"):
            ack()
            self._respond_all(respond, explain_messages(self.service.audit, rest.strip(), user, team, lang, self.cmd))
            return
        ack(text=T.say("working", lang), response_type="ephemeral")
        place = Place("slash", channel, None, None, user)
        self.answer(text, place, team=team, surface="slash", client=context.client, respond=respond, echo=text)

    # ----- follow-up buttons ------------------------------------------------------------------------------------
    def on_followup(self, ack: Callable, body: dict, action: dict, respond: Callable, context: Any) -> None:
        ack()
        user = (body.get("user") or {}).get("id") or ""
        team = (body.get("team") or {}).get("id") or context.team_id or ""
        container = body.get("container") or {}
        channel = container.get("channel_id") or (body.get("channel") or {}).get("id")
        message = body.get("message") or {}
        lang = lang_of(message.get("text") or "")
        place = Place.from_block_id(action.get("block_id"), channel)
        value = str(action.get("value") or "").strip()
        if place is None or not value:
            self._respond_all(respond, [(T.say("expired", lang), None)])
            return
        if user != place.owner:
            self._respond_all(respond, [(T.say("not_owner", lang, cmd=self.cmd), None)])
            return
        message_ts = container.get("message_ts") or message.get("ts") or ""
        if not self.service.audit.claim_event(f"act:{channel}:{message_ts}"):
            log.info("follow-up on message %s in %s already answered", message_ts, channel)
            return
        reply = self.answer(value, place, team=team, surface="button", client=context.client, respond=respond,
                            echo=value if place.kind == "slash" else None)
        if reply is not None and message.get("blocks") and not container.get("is_ephemeral"):
            label = ((action.get("text") or {}).get("text")) or value
            self._mark_chosen(context.client, channel, message_ts, message, action.get("block_id"), label, lang)

    def _mark_chosen(self, client: WebClient, channel: str, ts: str, message: dict, block_id: str, label: str,
                     lang: str) -> None:
        """Replace the buttons by a line saying what was chosen, so the question cannot be answered twice."""
        chosen = {"type": "context", "elements": [
            {"type": "mrkdwn", "text": clip(T.say("chosen", lang, choice=escape(label)), 2000)}]}
        new = [chosen if b.get("block_id") == block_id else b for b in message["blocks"]]
        try:
            client.chat_update(channel=channel, ts=ts, text=message.get("text") or "…", blocks=fit(new))
        except SlackApiError as exc:
            log.error("chat.update of %s in %s failed: %s", ts, channel, _reason(exc))

    # ----- one turn -----------------------------------------------------------------------------------------
    def answer(self, text: str, place: Place, *, team: str, surface: str, client: WebClient,
               respond: Callable | None = None, event_id: str | None = None, echo: str | None = None
               ) -> dict[str, Any] | None:
        """Run the turn, then post the reply where `place` says; None when the turn failed (already reported)."""
        try:
            reply = self.service.ask(text, surface=surface, user=place.owner, team=team, channel=place.channel,
                                     thread=place.session_thread or "", event_id=event_id,
                                     default_provider=self.state.prefs(team, place.owner).get("provider"))
        except Exception:                               # noqa: BLE001 - reported to the user and the log
            log.exception("the %s turn in %s failed", surface, place.channel)
            self.deliver([(T.say("failed", lang_of(text)), None)], place, client, respond)
            return None
        self.deliver(self.reply_messages(reply, place, echo), place, client, respond)
        return reply

    def reply_messages(self, reply: dict[str, Any], place: Place, echo: str | None = None, share: bool = True
                       ) -> list[Message]:
        """(fallback text, blocks) per message: Block Kit from render, buttons tagged, split within limits."""
        blocks = render_blocks(reply, self.t)
        for block in blocks:
            if block.get("type") == "actions" and block.get("block_id") == "followup":
                block["block_id"] = place.block_id()
        sources = next((i for i, b in enumerate(blocks) if b.get("type") == "context"), len(blocks))
        blocks[sources:sources] = answer_controls(reply, self.service.core.kb, place.block_id("refine"),
                                                  share=place.kind == "slash" and share)
        if echo:
            one_line = " ".join(echo.split())
            blocks.insert(0, {"type": "context", "elements": [
                {"type": "mrkdwn", "text": T.say("you_asked", reply["lang"], question=escape(clip(one_line, 300)))}]})
        note = T.say("trimmed", reply["lang"], cmd=self.cmd, id=reply.get("advice_id") or "")
        return with_fallbacks(split(fit(blocks), note), reply.get("text") or "")

    def deliver(self, messages: list[Message], place: Place, client: WebClient,
                respond: Callable | None) -> None:
        if place.kind == "slash" and respond is not None:
            self._respond_all(respond, messages)
            return
        for text, blocks in messages:
            if self.post(client, place.channel, place.reply_thread, text, blocks) is None:
                break

    def post(self, client: WebClient, channel: str, thread_ts: str | None, text: str, blocks: list[dict] | None):
        """chat.postMessage with unfurling off; a failure is logged with Slack's reason (and blocks dropped once)."""
        kwargs: dict[str, Any] = {"channel": channel, "text": text, "unfurl_links": False, "unfurl_media": False}
        if blocks:
            kwargs["blocks"] = blocks
        if thread_ts:
            kwargs["thread_ts"] = thread_ts
        try:
            return client.chat_postMessage(**kwargs)
        except SlackApiError as exc:
            reason = _reason(exc)
            log.error("chat.postMessage to %s failed: %s", channel, reason)
            if blocks and reason.split(" ")[0] in _BLOCK_ERRORS:
                try:
                    return client.chat_postMessage(**{k: v for k, v in kwargs.items() if k != "blocks"})
                except SlackApiError as again:
                    log.error("chat.postMessage (text only) to %s failed: %s", channel, _reason(again))
        except Exception as exc:                        # noqa: BLE001 - network errors after the retries
            log.error("chat.postMessage to %s failed: %s: %s", channel, type(exc).__name__, exc)
        return None

    @staticmethod
    def _respond_all(respond: Callable, messages: list[Message], response_type: str = "ephemeral") -> bool:
        """Post through the response_url; False (logged) when Slack refused or could not be reached."""
        for text, blocks in messages:
            try:
                resp = respond(text=text, blocks=blocks, response_type=response_type, replace_original=False,
                               unfurl_links=False, unfurl_media=False)
            except Exception as exc:                    # noqa: BLE001 - a dead response_url, network errors
                log.error("posting to the response_url failed: %s: %s", type(exc).__name__, exc)
                return False
            if getattr(resp, "status_code", 200) >= 300:
                log.error("posting to the response_url failed: HTTP %s %s", resp.status_code, (resp.body or "")[:200])
                return False
        return True

    # ----- errors -------------------------------------------------------------------------------------------
    def on_error(self, error: Exception, body: dict) -> None:
        kind = body.get("type") if isinstance(body, dict) else None
        log.error("unhandled error in a %s listener: %s: %s", kind, type(error).__name__, error,
                  exc_info=(type(error), error, error.__traceback__))


def _reason(exc: SlackApiError) -> str:
    response = getattr(exc, "response", None)
    try:
        reason = response.get("error") or str(exc)
        details = (response.get("response_metadata") or {}).get("messages") or []
    except Exception:                                   # noqa: BLE001 - a response that is not JSON
        return str(exc)
    return reason + (f" ({'; '.join(map(str, details))[:300]})" if details else "")


# ----- building and serving ---------------------------------------------------------------------------------------
@contextmanager
def _env_hidden() -> Iterator[None]:
    """App() reads SLACK_* variables by itself: the token and secret (passed explicitly here instead) and, worse,
    SLACK_CLIENT_ID/SECRET, with which it silently builds a multi-workspace OAuth flow. Hide them meanwhile."""
    import os
    names = ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET")
    saved = {n: os.environ.pop(n) for n in names if n in os.environ}
    oauth = [n for n in saved if n.startswith("SLACK_CLIENT_")]
    if oauth:
        log.warning("ignoring %s: gpu-advisor is a single-workspace app (SLACK_BOT_TOKEN)", ", ".join(oauth))
    try:
        yield
    finally:
        os.environ.update(saved)


def web_client(settings: SlackSettings) -> WebClient:
    """The Web API client: SLACK_API_BASE_URL, retries on rate limits (Retry-After) and on dropped connections."""
    return WebClient(token=settings.bot_token, base_url=settings.api_base_url, timeout=15,
                     retry_handlers=[ConnectionErrorRetryHandler(max_retry_count=1),
                                     RateLimitErrorRetryHandler(max_retry_count=2)])


def build_app(settings: SlackSettings, service: Any = None, templates: Templates | None = None) -> App:
    """The Bolt app with every listener registered. No Slack call happens here: auth.test waits for the first
    request (token_verification_enabled=False), so building needs no network."""
    if service is None:
        from bot.surfaces.service import Service
        service = Service()
    with _env_hidden():
        app = App(client=web_client(settings), signing_secret=settings.signing_secret or "",
                  request_verification_enabled=bool(settings.signing_secret),
                  token_verification_enabled=False, name="gpu-advisor",
                  listener_executor=ThreadPoolExecutor(max_workers=8, thread_name_prefix="slack-listener"))
    SlackBot(settings, service, templates).register(app)
    return app


def wsgi_app(app: App) -> Callable:
    """`POST /slack/events` to Bolt's WSGI adapter, `GET /healthz` answered here, anything else 404."""
    from slack_bolt.adapter.wsgi import SlackRequestHandler
    handler = SlackRequestHandler(app, path="/slack/events")

    def plain(start_response: Callable, status: str, body: bytes, extra: list | None = None) -> list[bytes]:
        start_response(status, [("Content-Type", "application/json" if body.startswith(b"{") else "text/plain"),
                                ("Content-Length", str(len(body)))] + (extra or []))
        return [body]

    def application(environ: dict, start_response: Callable) -> Any:
        path, method = environ.get("PATH_INFO") or "/", environ.get("REQUEST_METHOD") or "GET"
        if path == "/healthz":
            if method not in ("GET", "HEAD"):
                return plain(start_response, "405 Method Not Allowed", b"GET only\n", [("Allow", "GET, HEAD")])
            body = json.dumps({"ok": True, "service": "gpu-advisor"}).encode()
            return plain(start_response, "200 OK", body if method == "GET" else b"")
        if path == "/slack/events":
            if method != "POST":
                return plain(start_response, "405 Method Not Allowed", b"POST only\n", [("Allow", "POST")])
            return handler(environ, start_response)
        return plain(start_response, "404 Not Found", b"not found\n")

    return application


def _serve_http(app: App, host: str, port: int) -> None:
    from waitress import create_server
    server = create_server(wsgi_app(app), host=host, port=port, threads=8, ident="gpu-advisor",
                           max_request_body_size=1 << 20, clear_untrusted_proxy_headers=True)
    real_port = getattr(server, "effective_port", port)
    log.info("HTTP mode: listening on http://%s:%s (POST /slack/events, GET /healthz)", host, real_port)

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, stop)
    try:
        server.run()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.close()
        log.info("HTTP server stopped")


def _serve_socket(app: App, settings: SlackSettings) -> None:
    from slack_bolt.adapter.socket_mode import SocketModeHandler
    handler = SocketModeHandler(app, app_token=settings.app_token)
    log.info("Socket Mode: connecting to Slack (%s)", settings.api_base_url)

    def stop(signum: int, frame: Any) -> None:        # SIGTERM (docker stop, systemd, Kubernetes): a clean stop
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, stop)
    try:
        handler.start()
    except SlackApiError as exc:
        raise ConfigError(f"Socket Mode could not connect: Slack answered {_reason(exc)} to apps.connections.open",
                          fix="check SLACK_APP_TOKEN (an app-level token with the connections:write scope) and that "
                              "Socket Mode is enabled in the app's settings") from None
    except OSError as exc:
        raise AdvisorError(f"Socket Mode could not reach Slack at {settings.api_base_url}: {exc}",
                           fix="check the network, or SLACK_API_BASE_URL if you set it") from None
    except (KeyboardInterrupt, SystemExit):
        handler.close()
        log.info("Socket Mode stopped")


def run(mode: str = "http", host: str = "0.0.0.0", port: int = 3000) -> None:
    """`gpu-advisor serve`: check the settings, then serve until stopped. ConfigError names a bad setting."""
    settings = SlackSettings.from_env(mode)
    setup_logging(settings)
    from bot.surfaces.service import Service
    service = Service()                     # loads the knowledge base and opens ADVISOR_DB: fail before serving
    app = build_app(settings, service)
    if mode == "socket":
        _serve_socket(app, settings)
    else:
        _serve_http(app, host, port)
