"""Listeners for what people do with an answer on Slack, and for the App Home tab and the message shortcut.

Mixed into SlackBot (bot/surfaces/slack/app.py), which owns the intake and the delivery of turns (`answer`,
`reply_messages`, `_respond_all`, `state`, `service`). Every listener acks first (Slack's 3-second rule).
- refine_*: continue the conversation the answer belongs to (only its owner may; others are told privately).
- explain: the rule trace and sources, privately (the same visibility as `/gpu-advisor explain ID`).
- feedback_*: Helpful / Not helpful, stored with the advice id (one vote per person and answer, the last one
  counts); anyone in the workspace who can see the answer may vote.
- share: the asker posts a private answer in the channel, through the action's response_url (which needs
  no channel membership), and the private copy is replaced by a note.
- ask_about_message (message shortcut): answers the message's text privately, with Share in channel.
- app_home_opened / home_provider / home_currency: the Home tab (bot/surfaces/slack/home.py) and its settings.
- team_settings_edit / view team_settings: the workspace's settings (bot/surfaces/slack/team_home.py), admins only.
"""
from __future__ import annotations

import logging
import re
from typing import Any, Callable

from bot.surfaces.slack import text as T
from bot.surfaces.slack.controls import FEEDBACK_ACTIONS, refinement_text, with_votes
from bot.surfaces.slack.format import to_plain
from bot.surfaces.slack.home import home_lang, home_view
from bot.surfaces.slack.place import Place
from bot.surfaces.slack.team_home import BLOCKS, EDIT_ACTION, MODAL_ID, read_submission, settings_modal
from bot.surfaces.slack.views import details_messages, explain_messages

log = logging.getLogger("gpu_advisor.slack")

SHORTCUT_ID = "ask_about_message"          # deploy/slack-app-manifest.yml: features.shortcuts[].callback_id
_ADVICE_ID = re.compile(r"^A\d{6,}$")


def _who(body: dict, context: Any) -> tuple[str, str, str, dict, dict]:
    """(user, team, channel, container, message) of an interaction payload."""
    user = (body.get("user") or {}).get("id") or ""
    team = (body.get("team") or {}).get("id") or getattr(context, "team_id", None) or ""
    container = body.get("container") or {}
    channel = container.get("channel_id") or (body.get("channel") or {}).get("id") or ""
    return user, team, channel, container, body.get("message") or {}


class Interactions:
    """Answer buttons, the shortcut and App Home; see the module docstring."""

    def register_interactions(self, app: Any) -> None:
        app.action(re.compile(r"^refine_(cheaper|faster|cloud|gpu)$"))(self.on_refine)
        app.action(re.compile(r"^explain(_A\d+)?$"))(self.on_explain)
        app.action("details")(self.on_details)
        app.action(re.compile(r"^feedback_(helpful|not_helpful)$"))(self.on_feedback)
        app.action("share")(self.on_share)
        app.shortcut(SHORTCUT_ID)(self.on_shortcut)
        app.event("app_home_opened")(self.on_home_opened)
        app.action("home_provider")(self.on_home_provider)
        app.action("home_currency")(self.on_home_currency)
        app.action(EDIT_ACTION)(self.on_team_edit)
        app.view(MODAL_ID)(self.on_team_submit)

    # ----- refinements ------------------------------------------------------------------------------------------
    def on_refine(self, ack: Callable, body: dict, action: dict, respond: Callable, context: Any) -> None:
        ack()
        user, team, channel, container, message = _who(body, context)
        place = Place.from_block_id(action.get("block_id"), channel)
        text = refinement_text(action, self.service.core.kb)
        lang = "zh" if re.search(r"[\u3400-\u9fff]", text or "") else "en"
        if place is None or not text:
            self._respond_all(respond, [(T.say("expired", lang), None)])
            return
        if user != place.owner:
            self._respond_all(respond, [(T.say("not_owner", lang, cmd=self.cmd), None)])
            return
        message_ts = container.get("message_ts") or message.get("ts") or ""
        if not self.service.audit.claim_event(f"act:{channel}:{message_ts}:{action.get('action_id')}:{text}"):
            log.info("refinement %s on message %s in %s already answered", action.get("action_id"), message_ts, channel)
            return
        self.answer(text, place, team=team, surface="button", client=context.client, respond=respond,
                    echo=text if place.kind == "slash" else None)

    # ----- explain and feedback -------------------------------------------------------------------------------
    def _record(self, action: dict) -> dict[str, Any] | None:
        advice_id = str(action.get("value") or "")
        return self.service.audit.get(advice_id) if _ADVICE_ID.match(advice_id) else None

    def on_explain(self, ack: Callable, body: dict, action: dict, respond: Callable, context: Any) -> None:
        ack()
        user, team, *_ = _who(body, context)
        record = self._record(action) or {}
        lang = (record.get("reply") or {}).get("lang") or "en"
        messages = explain_messages(self.service.audit, str(action.get("value") or ""), user, team, lang, self.cmd)
        if body.get("response_url"):
            self._respond_all(respond, messages)
            return
        for text, blocks in messages:               # from the Home tab (no response_url): into the app's DM
            if self.post(context.client, user, None, text, blocks, team=team) is None:
                break

    def on_details(self, ack: Callable, body: dict, action: dict, respond: Callable, context: Any) -> None:
        """The answer's details, to whoever pressed Details (ephemeral), or into the app's DM from the Home tab."""
        ack()
        user, team, *_ = _who(body, context)
        messages = details_messages(self.service.audit, str(action.get("value") or ""), user, team, self.t, self.cmd)
        if body.get("response_url"):
            self._respond_all(respond, messages)
            return
        for text, blocks in messages:
            if self.post(context.client, user, None, text, blocks, team=team) is None:
                break

    def on_feedback(self, ack: Callable, body: dict, action: dict, respond: Callable, context: Any) -> None:
        ack()
        user, team, *_ = _who(body, context)
        record = self._record(action)
        if not record or not team or (record.get("team") or "") != team:
            self._respond_all(respond, [(T.say("expired", "en"), None)])
            return
        helpful = action.get("action_id") == FEEDBACK_ACTIONS[0]
        self.state.add_feedback(record["id"], user, team, helpful)
        from bot.surfaces.metrics import FEEDBACK
        FEEDBACK.labels("helpful" if helpful else "not_helpful").inc()
        log.info("feedback on advice %s: %s", record["id"], "helpful" if helpful else "not helpful")
        lang = (record.get("reply") or {}).get("lang") or "en"
        key = "thanks_helpful" if helpful else "thanks_not_helpful"
        message = body.get("message") or {}      # absent on an ephemeral answer: only the voter's thanks then
        votes = [bool(f["helpful"]) for f in self.state.feedback() if f["advice_id"] == record["id"]]
        tally = {True: votes.count(True), False: votes.count(False)}
        marked = with_votes(message["blocks"], record["id"], lang, tally) if message.get("blocks") else None
        self._respond_all(respond, [(T.say(key, lang, id=record["id"], cmd=self.cmd), None)],
                          then=(message.get("text") or "…") if marked else None, then_blocks=marked)

    # ----- share in channel -------------------------------------------------------------------------------------
    def on_share(self, ack: Callable, body: dict, action: dict, respond: Callable, context: Any) -> None:
        ack()
        user, team, channel, *_ = _who(body, context)
        record = self._record(action)
        if not record or record.get("user") != user or (record.get("team") or "") != team or not channel:
            self._respond_all(respond, [(T.say("expired", "en"), None)])
            return
        reply = record.get("reply") or {}
        lang = reply.get("lang") or "en"
        messages = self.reply_messages(reply, Place("slash", channel, None, None, user),
                                       echo=record.get("question") or "", share=False)
        _text, blocks = messages[0]
        if blocks and blocks[0].get("type") == "context":
            blocks[0]["elements"].append({"type": "mrkdwn", "text": T.say("shared_by", lang, user=user,
                                                                          id=record["id"])})
        if self._respond_all(respond, messages, response_type="in_channel", then=T.say("shared", lang)):
            log.info("advice %s shared in %s", record["id"], channel)

    # ----- message shortcut -----------------------------------------------------------------------------------
    def on_shortcut(self, ack: Callable, shortcut: dict, respond: Callable, context: Any) -> None:
        ack()
        user = (shortcut.get("user") or {}).get("id") or ""
        team = (shortcut.get("team") or {}).get("id") or getattr(context, "team_id", None) or ""
        channel = (shortcut.get("channel") or {}).get("id") or ""
        text = to_plain((shortcut.get("message") or {}).get("text"), getattr(context, "bot_user_id", None))
        if not text:
            self._respond_all(respond, [(T.say("help", "en", cmd=self.cmd), None)])
            return
        place = Place("slash", channel, None, None, user)
        self.answer(text, place, team=team, surface="shortcut", client=context.client, respond=respond, echo=text)

    # ----- App Home ------------------------------------------------------------------------------------------
    def on_home_opened(self, event: dict, body: dict, context: Any) -> None:
        if event.get("tab") not in (None, "home"):
            return
        self.publish_home(context.client, event.get("user") or "", body.get("team_id") or context.team_id or "")

    def on_home_provider(self, ack: Callable, body: dict, action: dict, context: Any) -> None:
        ack()
        user, team, *_ = _who(body, context)
        chosen = str((action.get("selected_option") or {}).get("value") or "")
        provider = chosen if chosen in self.service.core.kb.providers else None
        self.state.set_pref(team, user, provider=provider)
        log.info("default cloud of a user set to %s", provider or "the server's default")
        self.publish_home(context.client, user, team)

    def on_home_currency(self, ack: Callable, body: dict, action: dict, context: Any) -> None:
        ack()
        user, team, *_ = _who(body, context)
        chosen = str((action.get("selected_option") or {}).get("value") or "")
        codes = {r.base for r in self.service.core.kb.rates.values()} | \
            {r.currency for r in self.service.core.kb.rates.values()}
        self.state.set_pref(team, user, currency=chosen if chosen in codes else None)
        self.publish_home(context.client, user, team)

    # ----- workspace settings ---------------------------------------------------------------------------------------
    def on_team_edit(self, ack: Callable, body: dict, context: Any) -> None:
        """Edit on the Home tab: the settings modal, opened here at once (a trigger_id lives 3 seconds, too short to
        go through the inbox), for an admin of the workspace only."""
        ack()
        user, team, *_ = _who(body, context)
        if not self.is_team_admin(team, user):
            log.warning("workspace settings: %s is not an admin of %s; no modal", user, team)
            return
        lang = home_lang(self.service, user, team)
        view = settings_modal(self.service.core.kb, team, self.state.team_settings(team),
                              self.service.core.advisor.default_provider, lang)
        try:
            context.client.views_open(trigger_id=body.get("trigger_id"), view=view)
        except Exception as exc:                        # noqa: BLE001 - logged with Slack's reason
            why = str(exc.response.get("error") if getattr(exc, "response", None) is not None else type(exc).__name__)
            log.error("views.open for the workspace settings failed: %s", why)

    def on_team_submit(self, ack: Callable, body: dict, view: dict, context: Any) -> None:
        """Save: the submitter must be an admin of the team the modal was opened for; bad values are shown under
        their input (Slack's response_action errors) and nothing is saved."""
        user = (body.get("user") or {}).get("id") or ""
        team = str(view.get("private_metadata") or "")
        own = (body.get("team") or {}).get("id") or getattr(context, "team_id", None) or ""
        lang = home_lang(self.service, user, team) if team else "en"
        if not team or team != own or not self.is_team_admin(team, user):
            log.warning("workspace settings of %s refused: %s is not an admin there", team or "?", user)
            ack(response_action="errors", errors={BLOCKS[0]: T.say("team_not_admin", lang)})
            return
        values, errors = read_submission(view, self.service.core.kb, lang)
        if errors:
            ack(response_action="errors", errors=errors)
            return
        ack()
        self.state.set_team_settings(team, user, **values)
        log.info("workspace settings of %s set by %s: cloud %s, currency %s, retention %s days", team, user,
                 values["provider"] or "server default", values["currency"] or "as published",
                 values["retention_days"] or "unlimited")
        self.publish_home(context.client, user, team)

    def is_team_admin(self, team: str, user: str) -> bool:
        """Whoever installed the app in `team` (many-workspace mode) and the ids of ADVISOR_SLACK_ADMINS."""
        if not team or not user:
            return False
        if user in self.settings.admins:
            return True
        rows = self.teams.rows
        return bool(rows is not None and rows.find_installation(None, team, user))

    def publish_home(self, client: Any, user: str, team: str) -> None:
        if not user:
            return
        view = home_view(self.service, self.state, user=user, team=team, cmd=self.cmd,
                         admin=self.is_team_admin(team, user))
        try:
            client.views_publish(user_id=user, view=view)
        except Exception as exc:                        # noqa: BLE001 - logged with Slack's reason
            why = str(exc.response.get("error") if getattr(exc, "response", None) is not None else type(exc).__name__)
            from bot.surfaces.metrics import slack_error
            slack_error("views.publish", why)
            log.error("views.publish for the Home tab failed: %s", why)
