"""The interactive parts of an answer on Slack: refinement buttons, Explain, feedback and Share in channel.

The answer itself is laid out by bot/surfaces/slack/blocks.py; this module adds what only Slack can do with it.
- Refinements continue the conversation with a sentence the understanding already reads, in the reply's
  language ("cheaper", "finish within 2 days", "on gcp", "I have an a100 80gb"); "Other cloud" and "My own
  GPU" are menus of the knowledge base's providers and GPUs. Their block_id carries the conversation (Place).
- Details shows what the short answer leaves out (the plans considered, the checklist's reasons, assumptions, the
  other sources); Explain shows the rule trace (as `/gpu-advisor explain ID`); Helpful / Not helpful store feedback
  with the advice id, and the answer's buttons then show the votes; Share in channel (on private answers only) posts
  the answer for everyone in the channel.
Every value a button carries is ours (advice ids, provider and GPU ids), never text a person typed.
"""
from __future__ import annotations

import math
from typing import Any

from bot.surfaces.slack import text as T
from bot.surfaces.slack.format import BUTTON_TEXT_MAX, clip

REFINE_ACTIONS = ("refine_cheaper", "refine_faster", "refine_cloud", "refine_gpu")
FEEDBACK_ACTIONS = ("feedback_helpful", "feedback_not_helpful")
OPTIONS_MAX = 100            # static_select options (https://docs.slack.dev/reference/block-kit/block-elements/select-menu-element)
OPTION_TEXT_MAX = 75


def _button(action_id: str, label: str, value: str, style: str | None = None) -> dict[str, Any]:
    out = {"type": "button", "action_id": action_id, "value": value,
           "text": {"type": "plain_text", "text": clip(label, BUTTON_TEXT_MAX), "emoji": True}}
    if style:
        out["style"] = style
    return out


def _select(action_id: str, placeholder: str, options: list[tuple[str, str]]) -> dict[str, Any]:
    return {"type": "static_select", "action_id": action_id,
            "placeholder": {"type": "plain_text", "text": clip(placeholder, 150)},
            "options": [{"text": {"type": "plain_text", "text": clip(label, OPTION_TEXT_MAX)}, "value": value}
                        for value, label in options[:OPTIONS_MAX]]}


def answer_controls(reply: dict[str, Any], kb: Any, place_id: str, *, share: bool) -> list[dict[str, Any]]:
    """Two actions blocks for an answer: refinements + Explain (block_id = the conversation), then feedback
    (+ Share in channel when the answer is private). Nothing for replies that are not answers."""
    if reply.get("status") != "answer" or not reply.get("recommendations") or not reply.get("advice_id"):
        return []
    lang, advice = reply["lang"], reply["advice_id"]
    slots = reply.get("slots") or {}
    refine = [_button("refine_cheaper", T.say("btn_cheaper", lang), T.say("ask_cheaper", lang))]
    days = (reply.get("compute") or {}).get("days")
    if days and days >= 2:
        target = max(1, math.floor(days / 2))
        refine.append(_button("refine_faster", T.say("btn_faster", lang), T.say("ask_faster", lang, days=target)))
    rental = next((r for r in reply["recommendations"] if r.get("label") != "yours"), {})    # not the user's own
    current = rental.get("provider") or slots.get("provider")
    clouds = [(pid, p.name) for pid, p in kb.providers.items() if pid != current]
    if clouds:
        refine.append(_select("refine_cloud", T.say("btn_cloud", lang), [(f"{lang}:{v}", n) for v, n in clouds]))
    gpus = sorted(kb.gpus.values(), key=lambda g: (-(g.memory_gib or 0), g.name))
    refine.append(_select("refine_gpu", T.say("btn_gpu", lang), [(f"{lang}:{g.id}", g.name) for g in gpus]))
    refine.append(_button("explain", T.say("btn_explain", lang), advice))
    if reply.get("details"):           # the short form is the message; its details one click away
        refine.insert(0, _button("details", T.say("btn_details", lang), advice, style="primary"))
    return [{"type": "actions", "block_id": place_id, "elements": refine}, feedback_block(advice, lang, share=share)]


def feedback_block(advice: str, lang: str, *, share: bool, tally: dict[bool, int] | None = None) -> dict[str, Any]:
    """Helpful / Not helpful (+ Share in channel), each vote button with its count once someone has voted."""
    def label(key: str, helpful: bool) -> str:
        n = (tally or {}).get(helpful, 0)
        return T.say(key, lang) + (f" · {n}" if n else "")
    feedback = [_button("feedback_helpful", label("btn_helpful", True), advice),
                _button("feedback_not_helpful", label("btn_not_helpful", False), advice)]
    if share:
        feedback.append(_button("share", T.say("btn_share", lang), advice, style="primary"))
    return {"type": "actions", "block_id": f"feedback|{advice}", "elements": feedback}


def with_votes(blocks: list[dict[str, Any]], advice: str, lang: str, tally: dict[bool, int]) -> list[dict[str, Any]]:
    """The message's blocks with its feedback buttons showing the votes so far (what a click visibly changes)."""
    out = []
    for block in blocks:
        if block.get("block_id") == f"feedback|{advice}":
            share = any(e.get("action_id") == "share" for e in block.get("elements") or [])
            block = feedback_block(advice, lang, share=share, tally=tally)
        out.append(block)
    return out


def refinement_text(action: dict[str, Any], kb: Any) -> str | None:
    """The sentence a refinement sends into the conversation; None for an unknown choice. A menu option's value
    is `lang:id` (the answer's language, a provider or GPU id), so the sentence is in the conversation's language."""
    action_id = action.get("action_id")
    if action_id in ("refine_cheaper", "refine_faster"):
        return str(action.get("value") or "").strip() or None
    lang, _, chosen = str(((action.get("selected_option") or {}).get("value")) or "").partition(":")
    lang = lang if lang in ("en", "zh") else "en"
    if action_id == "refine_cloud" and chosen in kb.providers:
        return T.say("ask_cloud", lang, provider=chosen)
    if action_id == "refine_gpu" and chosen in kb.gpus:
        return T.say("ask_gpu", lang, gpu=chosen.replace("-", " "))
    return None


def currency_note(reply: dict[str, Any], kb: Any, currency: str | None) -> dict[str, Any] | None:
    """A context line with the pick's price (and the job's cost) in the user's display currency (App Home),
    converted at the knowledge base's dated ECB rate and linked to it; None when there is nothing to convert."""
    recs = [r for r in reply.get("recommendations") or [] if r.get("label") != "yours"]     # the rental's price
    top = recs[0] if recs else {}
    have = top.get("currency")
    if not currency or not have or currency == have or top.get("price_per_hour") is None:
        return None
    try:
        hourly = kb.convert(float(top["price_per_hour"]), have, currency)
        job = kb.convert(float(top["job_cost"]), have, currency) if top.get("job_cost") else None
        rates = kb.rates_used(have, currency)
    except Exception:                                   # noqa: BLE001 - a currency the rate table lacks
        return None
    lang = reply.get("lang") or "en"
    sources = [kb.sources[s] for r in rates for s in r.sources if s in kb.sources]
    when = max(r.date for r in rates).isoformat() if rates else "?"
    link = next((f"<{src.url}|{T.say('rate_source', lang, date=when)}>" for src in sources
                 if str(src.url or "").startswith("https://")), T.say("rate_source", lang, date=when))
    text = T.say("in_currency", lang, price=f"{hourly:,.2f} {currency}", source=link)
    if job is not None:
        text += " · " + T.say("in_currency_job", lang, cost=f"{job:,.0f} {currency}")
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}
