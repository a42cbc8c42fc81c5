"""The Slack surface: a Bolt app that turns DMs, @mentions, the slash command and follow-up buttons into turns.

Only this module (and bot/surfaces/slack/) imports Slack. Each listener translates a payload into one
`Service.ask` call (session load/save + audit record) and the reply back into Block Kit; the core never sees
Slack. `build_app(settings, service)` makes the app; `run(mode, host, port)` serves it (bot/surfaces/slack/serve.py:
Socket Mode, or HTTP with Bolt's WSGI adapter under waitress; /healthz, /readyz and /metrics in both).

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

import datetime as dt
import hashlib
import logging
import re
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any, Callable, Iterable, Iterator

from slack_bolt import App
from slack_sdk import WebClient

from bot.surfaces.slack import text as T
from bot.records.config import settings as conf
from bot.surfaces.slack.blocks import blocks as render_blocks
from bot.surfaces.slack.guard import scrub
from bot.surfaces.slack.identity import BotIdentity, bot_user_of
from bot.surfaces.slack.format import Message, clip, escape, fit, lang_of, split, to_plain, with_fallbacks
from bot.surfaces.slack.controls import answer_controls, currency_note
from bot.surfaces.slack.interactions import Interactions
from bot.surfaces.slack.views import explain_messages, history_messages
from bot.store.backend import open_inbox, open_slack_state, open_spool
from bot.surfaces.slack.settings import SlackSettings
from bot.render.templates import Templates, default_templates
from bot.store.chain import iso_utc, redact_question
from bot.store.faults import StorageError
from bot.store.inbox import Inbox, Job
from bot.surfaces.slack.oauth import TeamClients, cached_authorize, oauth_settings
from bot.surfaces.slack.place import Place
from bot.surfaces.slack.outbound import TIMEOUT_S, Outbound, retry_handlers
from bot.surfaces.slack.throttle import RateLimited
from bot.surfaces.slack.worker import DEFAULT_ATTEMPTS, DEFAULT_WORKERS, WorkerPool

log = logging.getLogger("gpu_advisor.slack")

FOLLOWUP_ACTION = re.compile(r"^followup_choice_\d+$")
_ANSWERED_SUBTYPES = (None, "thread_broadcast", "file_share")


class SlackBot(Interactions):
    """The listeners (intake: write the job, then ack) and the job handler the worker pool runs.

    Plain methods: Bolt injects ack/body/context... by parameter name. Listeners never call Slack: they only
    record a job in the durable inbox (bot/store/inbox.py), so the HTTP response or Socket Mode ack follows
    within milliseconds whatever the load; `process(job)` runs in a worker thread and posts through `Outbound`.
    """

    def __init__(self, settings: SlackSettings, service: Any, templates: Templates | None = None, *,
                 client: WebClient | None = None, inbox: Inbox | None = None, workers: int = DEFAULT_WORKERS,
                 max_attempts: int = DEFAULT_ATTEMPTS, teams: TeamClients | None = None):
        self.settings = settings
        self.service = service
        self.t = templates or default_templates()
        self.cmd = settings.slash_command
        self.state = open_slack_state(service.audit.path)      # same database: SQLite file or PostgreSQL
        self.teams = teams or TeamClients(client or web_client(settings))   # one workspace, or each team's token
        self.out = self.teams.default
        self.inbox = inbox or open_inbox(service.audit.path)
        self.spool = open_spool(service.audit.path, conf().advisor_spool_dir)   # requests kept while it is away
        self.pool = WorkerPool(self.inbox, self.process, self.apologise, size=workers, max_attempts=max_attempts,
                               scan_s=conf().advisor_inbox_scan_s, spool=self.spool, housekeeping=self.housekeep,
                               slack_wait_s=conf().advisor_slack_wait_s)

    def register(self, app: App) -> App:
        app.event("app_mention")(self.on_mention)
        app.event("message")(self.on_message)           # every subtype: edits and joins are acked and ignored
        app.command(self.cmd)(self.on_command)
        app.action(FOLLOWUP_ACTION)(self.on_followup)
        self.register_interactions(app)
        app.error(self.on_error)
        return app

    def enqueue(self, job_id: str, kind: str, payload: dict[str, Any], keys: list[str] = (), request: Any = None
                ) -> str:
        """Write the job (deduplicated by id and keys) and hand it to the workers.

        Returns "queued", "duplicate", "kept" (the database is away: the job waits in the local spool and is
        recorded and answered when it is back), or "unrecorded" when neither could keep it: then the caller does
        not acknowledge an event (Slack sends it again), and a slash command is told to try again.
        """
        payload = scrub(payload)                        # lone surrogates -> U+FFFD: always storable as UTF-8
        for name in ("text", "echo", "rest"):           # a pasted credential never reaches the disk
            if isinstance(payload.get(name), str):
                payload[name] = redact_question(payload[name])[0]
        if self.pool.watch.is_up():
            try:
                new = self.inbox.put(job_id, kind, payload, keys)
            except StorageError as exc:
                self.pool.watch.down(exc)
            else:
                return self._queued(job_id, kind, new, request)
        return self._keep(job_id, kind, payload, keys)

    def _queued(self, job_id: str, kind: str, new: bool, request: Any) -> str:
        if not new:
            header = (lambda name: (request.headers.get(name) or [None])[0]) if request is not None else lambda n: None
            retry = f" (retry {header('x-slack-retry-num')}, {header('x-slack-retry-reason')})" \
                if header("x-slack-retry-num") else ""
            log.info("%s %s already handled%s: not answered again", kind, job_id, retry)
            return "duplicate"
        self.pool.submit(job_id)
        return "queued"

    def _keep(self, job_id: str, kind: str, payload: dict[str, Any], keys: Iterable[str]) -> str:
        """The database is away: keep the job in the local spool (recorded when it is back), or say it is lost."""
        try:
            self.spool.put(job_id, kind, payload, keys)
        except OSError as exc:
            log.error("could not keep a Slack %s: the database is away and the spool %s cannot be written (%s); "
                      "Slack is answered with an error so it sends events again", kind, self.spool.folder,
                      exc.strerror or exc)
            return "unrecorded"
        return "kept"

    def _out(self, payload: dict[str, Any]) -> Outbound:
        """Who posts for this job: the one workspace's client, or the installed bot's of the job's team (a job
        without a team only answers through its response_url, which needs no token)."""
        if not self.teams.multi or not payload.get("team"):
            return self.out
        return self.teams.outbound(payload["team"])

    # ----- events ----------------------------------------------------------------------------------------------
    def on_message(self, body: dict, event: dict, context: Any, request: Any) -> None:
        channel = event.get("channel") or ""
        if event.get("channel_type") == "im" or channel.startswith("D"):
            self._on_event(body, event, context, request, "dm")
            return
        follow_up = self._thread_follow_up(event, bot_user_of(context, body))
        if follow_up:
            self._on_event(body, event, context, request, "mention",
                           {"if_in_thread": True} if follow_up == "maybe" else None)
        # other channel messages: one that mentions the bot also arrives as app_mention, answered there

    def _thread_follow_up(self, event: dict, me: str | None) -> bool | str:
        """A reply in a thread the bot has answered in continues without a new @mention, unless it mentions
        someone else (people talking to each other in the thread). "maybe" while the database is away: the job
        is kept and the worker asks again (`if_in_thread`) once it is back."""
        thread, ts = event.get("thread_ts"), event.get("ts")
        if not thread or thread == ts or not event.get("channel"):
            return False
        others = set(re.findall(r"<@([A-Z0-9]+)", event.get("text") or "")) - {me}
        if others:
            return False
        try:
            return self.state.in_thread(event["channel"], thread)
        except StorageError as exc:
            self.pool.watch.down(exc)
            return "maybe"

    def on_mention(self, body: dict, event: dict, context: Any, request: Any) -> None:
        kind = "dm" if (event.get("channel") or "").startswith("D") else "mention"
        self._on_event(body, event, context, request, kind)

    def _on_event(self, body: dict, event: dict, context: Any, request: Any, kind: str,
                  extra: dict[str, Any] | None = None) -> None:
        user, channel, ts = event.get("user"), event.get("channel"), event.get("ts")
        me = bot_user_of(context, body)
        if self._from_bot(event, me):
            log.debug("ignored a message from a bot in %s", channel)
            return
        if event.get("subtype") not in _ANSWERED_SUBTYPES or not (user and channel and ts):
            return
        if kind == "mention":
            root = event.get("thread_ts") or ts
            place = Place("mention", channel, root, root, user)
        else:
            place = Place("dm", channel, None, event.get("thread_ts"), user)
        team = body.get("team_id") or event.get("team") or context.team_id or ""
        text = to_plain(event.get("text"), me) or "help"
        payload = {"task": "answer", "text": text, "place": asdict(place), "team": team, "surface": kind,
                   **(extra or {})}
        if kind == "mention" and not self._join_thread(channel, place.session_thread or ts):
            payload["join_thread"] = True               # the database is away: the worker joins it later
        message_key = f"msg:{channel}:{ts}"            # also collapses a mention sent as message + app_mention
        job_id = body.get("event_id") or message_key
        if self.enqueue(job_id, kind, payload, [message_key], request) == "unrecorded":
            raise NotKept(f"the {kind} {job_id} could not be recorded or kept")

    def _join_thread(self, channel: str, thread_ts: str) -> bool:
        """Remember a thread the bot answers in (its replies continue without a mention); False: not now."""
        try:
            self.state.join_thread(channel, thread_ts)
            return True
        except StorageError as exc:
            self.pool.watch.down(exc)
            return False

    @staticmethod
    def _from_bot(event: dict, me: str | None) -> bool:
        if event.get("bot_id") or event.get("bot_profile") or event.get("subtype") == "bot_message":
            return True
        return bool(me and event.get("user") == me)

    # ----- slash command ----------------------------------------------------------------------------------------
    def on_command(self, ack: Callable, command: dict, request: Any) -> None:
        text = to_plain(command.get("text"))
        word, _, rest = text.partition(" ")
        lang = lang_of(text)
        user, team, channel = command.get("user_id") or "", command.get("team_id") or "", command.get("channel_id") or ""
        verb = word.lower()
        if verb in ("", "help", "帮助", "?"):
            ack(text=T.say("help", lang, cmd=self.cmd), response_type="ephemeral")
            return
        task = {"history": "history", "历史": "history", "explain": "explain", "解释": "explain"}.get(verb, "answer")
        job_id, keys = _request_ids("cmd", command, request)
        place = Place("slash", channel, None, None, user)
        waiting = self.pool.depth()
        state = self.enqueue(job_id, "slash", {"task": task, "text": text, "rest": rest.strip(), "lang": lang,
                                               "place": asdict(place), "team": team, "surface": "slash",
                                               "response_url": command.get("response_url"), "echo": text}, keys)
        if state == "unrecorded":
            ack(text=T.say("not_recorded", lang), response_type="ephemeral")
        elif task != "answer" or state == "duplicate":
            ack()
        elif waiting >= self.pool.size:
            ack(text=T.say("queued", lang, n=waiting - self.pool.size + 1), response_type="ephemeral")
        else:
            ack(text=T.say("working", lang), response_type="ephemeral")

    # ----- follow-up buttons ------------------------------------------------------------------------------------
    def on_followup(self, ack: Callable, body: dict, action: dict, context: Any, request: Any) -> None:
        ack()
        user = (body.get("user") or {}).get("id") or ""
        team = (body.get("team") or {}).get("id") or context.team_id or ""
        container = body.get("container") or {}
        channel = container.get("channel_id") or (body.get("channel") or {}).get("id")
        message = body.get("message") or {}
        lang = lang_of(message.get("text") or "")
        place = Place.from_block_id(action.get("block_id"), channel)
        value = str(action.get("value") or "").strip()
        notice_id, keys = _request_ids("note", body, request)
        notice = {"task": "notice", "lang": lang, "response_url": body.get("response_url"), "team": team,
                  "place": asdict(Place("slash", channel or "", None, None, user))}   # privately, to the clicker
        if place is None or not value:
            self.enqueue(notice_id, "button", {**notice, "say": "expired"}, keys)
            return
        if user != place.owner:
            self.enqueue(notice_id, "button", {**notice, "say": "not_owner"}, keys)
            return
        message_ts = container.get("message_ts") or message.get("ts") or ""
        chosen = None
        if message.get("blocks") and not container.get("is_ephemeral"):
            chosen = {"ts": message_ts, "text": message.get("text"), "blocks": message["blocks"],
                      "block_id": action.get("block_id"), "label": ((action.get("text") or {}).get("text")) or value}
        state = self.enqueue(f"act:{channel}:{message_ts}", "button",
                             {"task": "answer", "text": value, "place": asdict(place), "team": team,
                              "surface": "button", "lang": lang, "response_url": body.get("response_url"),
                              "chosen": chosen, "echo": value if place.kind == "slash" else None}, keys)
        if state == "unrecorded":
            raise NotKept("a button click could not be recorded or kept")

    # ----- one job, in a worker thread -------------------------------------------------------------------------
    def process(self, job: Job) -> None:
        """Run one inbox job to the end: the turn (once), the reply's parts not posted yet, the job marked done."""
        p = job.payload
        task = p.get("task")
        try:
            out = self._out(p)
        except LookupError as exc:                     # uninstalled since the request came: nobody to answer
            log.warning("job %s not answered: %s", job.id, exc)
            self.inbox.finish(job.id, advice_id=None, delivered=False, error=str(exc))
            return
        if task == "home":
            Interactions.publish_home(self, out.client, p.get("user") or "", p.get("team") or "")
            self.inbox.finish(job.id, advice_id=None, delivered=True)
            return
        place = Place(**p["place"])
        if p.get("join_thread"):                        # the edge could not record the thread (database away)
            self.state.join_thread(place.channel, place.session_thread or "")
        if p.get("if_in_thread") and not self.state.in_thread(place.channel, place.session_thread or ""):
            self.inbox.finish(job.id, advice_id=None, delivered=False, error="not a thread the bot answers in")
            return
        if task == "notice":
            messages = [(T.say(p["say"], p.get("lang") or "en", cmd=self.cmd), None)]
            advice_id = None
        elif task == "messages":
            messages = [(text, blocks) for text, blocks in p.get("messages") or []]
            advice_id = None
        elif task in ("history", "explain"):
            view = history_messages if task == "history" else explain_messages
            args = () if task == "history" else (p.get("rest") or "",)
            messages = view(self.service.audit, *args, place.owner, p.get("team") or "", p.get("lang") or "en",
                            self.cmd)
            advice_id = None
        else:
            reply = self._reply_of(job, place)
            currency = self._defaults(p.get("team") or "", place.owner).get("currency")
            messages = self.reply_messages(reply, place, p.get("echo"), currency=currency)
            advice_id = reply.get("advice_id")
        resumed = _epoch(job.received) if job.attempts > 1 else None
        try:
            delivered, error = out.deliver(messages, place, p.get("response_url"), skip=job.parts_posted,
                                           posted=lambda n: self.inbox.posted(job.id, n, advice_id), job=job.id,
                                           resumed_since=resumed, response_type=p.get("response_type"))
        except RateLimited as wait:                     # the job waits in the inbox with its recorded reply
            wait.advice_id = advice_id
            raise
        if delivered and p.get("then") and p.get("response_url"):
            out.respond(p["response_url"], p["then"], p.get("then_blocks"), replace_original=True)
        if delivered and p.get("chosen"):
            self._mark_chosen(out, place.channel, p["chosen"], p.get("lang") or "en")
        self.inbox.finish(job.id, advice_id=advice_id, delivered=delivered, error=error)

    def _reply_of(self, job: Job, place: Place) -> dict[str, Any]:
        """The turn's reply; a job whose turn was recorded before (a crash, a rate limit's wait) reuses that record:
        the turn runs once per job, so the conversation's state moves on once."""
        recorded = self.service.audit.by_event(job.id)
        if recorded and isinstance(recorded.get("reply"), dict):
            return {**recorded["reply"], "advice_id": recorded["id"]}
        p = job.payload
        team = p.get("team") or ""
        return self.service.ask(p["text"], surface=p["surface"], user=place.owner, team=team,
                                channel=place.channel, thread=place.session_thread or "", event_id=job.id,
                                default_provider=self._defaults(team, place.owner).get("provider"))

    def _defaults(self, team: str, user: str) -> dict[str, Any]:
        """Default cloud and display currency of an answer: the user's own App Home choice, else the workspace's
        setting (bot/surfaces/slack/team_home.py), else the server's; a cloud named in the question beats all."""
        workspace = self.state.team_settings(team)
        mine = self.state.prefs(team, user)
        return {k: mine.get(k) or workspace.get(k) for k in ("provider", "currency")}

    def apologise(self, job: Job, error: BaseException) -> bool:
        """The last attempt failed: tell the user, in the language of the question. True when it was delivered."""
        p = job.payload
        try:
            place = Place(**p["place"])
        except (KeyError, TypeError):
            return False
        lang = p.get("lang") or lang_of(p.get("text") or "")
        try:
            out = self._out(p)
        except LookupError:
            return False
        delivered, _ = out.deliver([(T.say("failed", lang), None)], place, p.get("response_url"))
        return delivered

    def _mark_chosen(self, out: Outbound, channel: str, chosen: dict[str, Any], lang: str) -> None:
        """Replace the buttons by a line saying what was chosen, so the question cannot be answered twice."""
        line = {"type": "context", "elements": [
            {"type": "mrkdwn", "text": clip(T.say("chosen", lang, choice=escape(chosen["label"])), 2000)}]}
        new = [line if b.get("block_id") == chosen["block_id"] else b for b in chosen["blocks"]]
        out.update(channel, chosen["ts"], chosen.get("text") or "…", fit(new))

    def reply_messages(self, reply: dict[str, Any], place: Place, echo: str | None = None, share: bool = True,
                       currency: str | None = None) -> list[Message]:
        """(fallback text, blocks) per message: Block Kit from render, buttons tagged, split within limits;
        `currency`, the user's display currency, adds the converted price under the decision."""
        blocks = render_blocks(reply, self.t)
        for block in blocks:
            if block.get("type") == "actions" and block.get("block_id") == "followup":
                block["block_id"] = place.block_id()
        sources = next((i for i, b in enumerate(blocks) if b.get("type") == "context"), len(blocks))
        blocks[sources:sources] = answer_controls(reply, self.service.core.kb, place.block_id("refine"),
                                                  share=place.kind == "slash" and share)
        converted = currency_note(reply, self.service.core.kb, currency)
        if converted is not None:                      # under the decision (the first section)
            decision = next((i for i, b in enumerate(blocks) if b.get("type") == "section"), 0)
            blocks.insert(decision + 1, converted)
        if echo:
            one_line = " ".join(echo.split())
            blocks.insert(0, {"type": "context", "elements": [
                {"type": "mrkdwn", "text": T.say("you_asked", reply["lang"], question=escape(clip(one_line, 300)))}]})
        note = T.say("trimmed", reply["lang"], cmd=self.cmd, id=reply.get("advice_id") or "")
        return with_fallbacks(split(fit(blocks), note), reply.get("text") or "")

    # ----- for the interactions (bot/surfaces/slack/interactions.py): the same inbox path -------------------
    def answer(self, text: str, place: Place, *, team: str, surface: str, client: WebClient | None = None,
               respond: Callable | None = None, event_id: str | None = None, echo: str | None = None) -> None:
        """Queue a turn whose reply goes where `place` says (the caller has deduplicated the request)."""
        self.enqueue(event_id or f"ans:{uuid.uuid4().hex}", surface,
                     {"task": "answer", "text": text, "place": asdict(place), "team": team, "surface": surface,
                      "response_url": getattr(respond, "response_url", None), "echo": echo})

    def _respond_all(self, respond: Callable, messages: list[Message], response_type: str = "ephemeral",
                     then: str | None = None, then_blocks: list[dict[str, Any]] | None = None) -> bool:
        """Queue ready-made messages for the response_url (True: queued; the worker posts them, with retries);
        `then`, once they are posted, replaces the message the click came from (the share button's note)."""
        url = getattr(respond, "response_url", None)
        if not url:
            log.error("no response_url to answer through: %d message(s) dropped", len(messages))
            return False
        self.enqueue(f"out:{uuid.uuid4().hex}", "button",
                     {"task": "messages", "messages": [list(m) for m in messages], "response_url": url,
                      "response_type": response_type, "then": then, "then_blocks": then_blocks,
                      "place": asdict(Place("slash", "", None, None, ""))})
        return True

    def post(self, client: WebClient, channel: str, thread_ts: str | None, text: str, blocks: list[dict] | None,
             team: str = ""):
        """Queue one chat.postMessage (the worker posts it, with retries, as `team`'s bot); True when queued."""
        state = self.enqueue(f"out:{uuid.uuid4().hex}", "button",
                             {"task": "messages", "messages": [[text, blocks]], "team": team,
                              "place": asdict(Place("dm", channel, None, thread_ts, ""))})
        return True if state in ("queued", "kept") else None

    def publish_home(self, client: Any, user: str, team: str) -> None:
        """Queue the App Home's views.publish, so neither app_home_opened nor a Home click waits for Slack."""
        if user:
            self.enqueue(f"home:{uuid.uuid4().hex}", "button", {"task": "home", "user": user, "team": team})

    def stop(self, deadline_s: float) -> None:
        """SIGTERM: no new job; the queued and running ones get `deadline_s` to finish; the rest stay open in the
        inbox (resumed at the next start, claimed at once by another PostgreSQL replica: the lease is released)."""
        began = time.monotonic()
        done, left = self.pool.drain(deadline_s)
        self.inbox.close()
        log.info("stopped in %.1f s: %d job(s) finished while stopping, %d left open in the inbox for the next "
                 "start", time.monotonic() - began, done, left)

    def housekeep(self) -> None:
        """Retention while serving, every few minutes (the database watch runs it): a finished job's question is
        emptied ADVISOR_INBOX_KEEP_HOURS after it finished, event ids are dropped after a day or that window,
        whichever is longer, and expired sessions are deleted (they were only at start)."""
        keep = dt.timedelta(hours=conf().advisor_inbox_keep_hours)
        now = dt.datetime.now(dt.timezone.utc)
        jobs, ids = self.inbox.housekeep(iso_utc(now - keep), iso_utc(now - max(keep, dt.timedelta(days=1))))
        sessions = self.service.sessions.purge_expired()
        if jobs or ids or sessions:
            log.info("retention: %d finished job(s) emptied of their question, %d event id(s) and %d expired "
                     "session(s) deleted", jobs, ids, sessions)

    # ----- health -------------------------------------------------------------------------------------------
    def health(self) -> tuple[bool, dict[str, Any]]:
        """(ok, facts) for /readyz: the database's state as the watch last saw it (up, or down since when and
        why), jobs per state, the queue and what waits for the database. No database call: it answers at once."""
        facts = {**self.pool.watch.snapshot(), "waiting": self.pool.depth(), "workers": self.pool.size}
        return facts["database"] == "up", facts

    # ----- errors -------------------------------------------------------------------------------------------
    def on_error(self, error: Exception, body: dict) -> None:
        kind = body.get("type") if isinstance(body, dict) else None
        if isinstance(error, StorageError):             # the database is away: said once by the watch, no trace
            if not isinstance(error, NotKept):
                self.pool.watch.down(error)
            log.warning("a %s request was answered with an error (Slack may send it again): %s", kind,
                        error.render())
            return
        log.error("unhandled error in a %s listener: %s: %s", kind, type(error).__name__, error,
                  exc_info=(type(error), error, error.__traceback__))


class NotKept(StorageError):
    """A request that neither the database nor the spool could keep: the listener raises it so that Bolt answers
    HTTP 500 (Socket Mode: no ack) and Slack delivers the event again, instead of acknowledging what is lost."""


def _epoch(iso: str) -> float:
    """Seconds since 1970 of an ISO-8601 UTC stamp, one second early (the inbox stamps whole seconds)."""
    return dt.datetime.fromisoformat(iso).timestamp() - 1


def _request_ids(prefix: str, payload: dict, request: Any) -> tuple[str, list[str]]:
    """A job id for a request without an event id, from what is unique per invocation: its response_url (one per
    command or click, in both modes), else the hash of its signature (HTTP mode).

    A replayed signed request carries the same response_url and signature, so it is recognised and answered once.
    """
    keys = []
    url = payload.get("response_url") if isinstance(payload, dict) else None
    if isinstance(url, str) and url:
        keys.append(f"{prefix}:url:{hashlib.sha256(url.encode()).hexdigest()[:32]}")
    signature = (request.headers.get("x-slack-signature") or [None])[0] if request is not None else None
    if signature:
        keys.append(f"{prefix}:sig:{hashlib.sha256(signature.encode()).hexdigest()[:32]}")
    if not keys:
        keys.append(f"{prefix}:{uuid.uuid4().hex}")
    return keys[0], keys[1:]


# ----- building and serving ---------------------------------------------------------------------------------------
@contextmanager
def _env_hidden() -> Iterator[None]:
    """App() and OAuthSettings() read SLACK_* variables by themselves: the token, the secrets (passed explicitly here
    instead, as checked by SlackSettings) and SLACK_CLIENT_ID/SECRET, with which App() would build an OAuth flow
    with a file store of its own. Hide them meanwhile: the OAuth flow, when on, is ours (bot/surfaces/slack/oauth.py)."""
    import os
    names = ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "SLACK_SCOPES",
             "SLACK_USER_SCOPES", "SLACK_REDIRECT_URI", "SLACK_INSTALL_PATH", "SLACK_REDIRECT_URI_PATH")
    saved = {n: os.environ.pop(n) for n in names if n in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def web_client(settings: SlackSettings, token: str | None = None) -> WebClient:
    """The Web API client (SLACK_BOT_TOKEN's, or `token`: an installed workspace's): SLACK_API_BASE_URL; bounded
    retries on 5xx, 429 (Retry-After) and dropped connections, each retry counted in the metrics."""
    from bot.surfaces.metrics import count_retries
    return WebClient(token=token if token is not None else (settings.bot_token or None),
                     base_url=settings.api_base_url, timeout=TIMEOUT_S, retry_handlers=count_retries(retry_handlers(connection=False)))


def build_app(settings: SlackSettings, service: Any = None, templates: Templates | None = None) -> App:
    """The Bolt app with every listener registered, and its worker pool started (jobs left open by a previous
    process are resumed). No Slack call happens here: auth.test waits for the first request
    (token_verification_enabled=False), so building needs no network.

    process_before_response=True: Bolt answers a request only after its listener returned, and listeners only
    write the job to the inbox, so nothing is acknowledged before it is on disk, and acks stay fast."""
    if service is None:
        from bot.surfaces.service import Service
        service = Service()
    common = dict(signing_secret=settings.signing_secret or "", name="gpu-advisor",
                  request_verification_enabled=bool(settings.signing_secret), process_before_response=True,
                  listener_executor=ThreadPoolExecutor(max_workers=2, thread_name_prefix="slack-listener"))
    rows = None
    if settings.multi_workspace and config_bot_token():
        log.warning("SLACK_BOT_TOKEN is not used: SLACK_CLIENT_ID/SECRET are set, so each workspace is answered with "
                    "the token it installed")
    with _env_hidden():
        if settings.multi_workspace:
            app, rows = _oauth_app(settings, service, common)
        else:                                       # auth.test in the background: no request waits on Slack
            client = web_client(settings)
            identity = BotIdentity(client)
            app = App(client=client, authorize=identity.authorizer(), **common)
    teams = TeamClients(app.client, rows, make_client=lambda token: web_client(settings, token),
                        client_id=settings.client_id, client_secret=settings.client_secret)
    bot = SlackBot(settings, service, templates, client=app.client, teams=teams)
    bot.register(app)
    bot.pool.start()
    from bot.surfaces.metrics import bind_inbox, gate
    gate(bot.pool.watch.is_up)                      # /metrics reads no gauge from a database known to be away
    bind_inbox(bot.pool.watch.backlog, bot.pool.watch.oldest_age)
    app.advisor_health = bot.health                 # for GET /readyz (wsgi_app): the inbox and the database
    app.advisor_stop = bot.stop                     # for a graceful stop (serve.py, on SIGTERM)
    return app


def config_bot_token() -> bool:
    import os
    return bool((os.environ.get("SLACK_BOT_TOKEN") or "").strip())


def _oauth_app(settings: SlackSettings, service: Any, common: dict[str, Any]) -> tuple[App, Any]:
    """The many-workspace app: Bolt's OAuth flow over the installations in ADVISOR_DB (bot/surfaces/slack/oauth.py).
    Every stored token must open with ADVISOR_TOKEN_KEY before serving (TokenKeyError says what to do)."""
    from bot.store.backend import open_installations
    from bot.store.tokens import TokenCipher
    rows = open_installations(service.audit.path, TokenCipher(settings.token_key or ""))
    readable = rows.check_keys()
    oauth = oauth_settings(settings, rows)
    app = App(client=web_client(settings, ""), oauth_settings=oauth, authorize=cached_authorize(oauth), **common)
    app.enable_token_revocation_listeners()            # tokens_revoked, app_uninstalled: delete the workspace's rows
    log.info("many workspaces: GET /slack/install and /slack/oauth_redirect; %d workspace(s) installed, %d stored "
             "token row(s) open with ADVISOR_TOKEN_KEY", len(rows.workspaces()), readable)
    return app, rows
