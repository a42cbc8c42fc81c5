"""A follow-up that asks about a card for the job just planned ('A10 不行吗？便宜很多啊', 'L4 不行？', 'why not A10?
it's much cheaper', '为什么不用 T4') is a question about that card (its memory, time / load and cost against the pick),
never a refusal of it: the card is not excluded, and the reply leads with that card's verdict for the job. A refusal
said as a statement ('H100 不行', 'no H100', '没有 H100 的配额') still excludes it."""
from __future__ import annotations

import pytest

from bot.conversation.hardware_limits import hardware_limits

ASKS = ["{g} 不行吗？便宜很多啊", "{g} 不行？", "{g}不行吗", "{g} 不可以吗？", "为什么不用 {g}", "为啥不用{g}？",
        "why not {g}? it's much cheaper", "why not just use 2x {g}?", "Why not {g}?"]
REFUSALS = ["{g} 不行", "{g} 不行，太贵", "no {g}", "没有 {g} 的配额", "we can't use {g}", "{g} is not available"]
CARDS = ["A10", "L4", "T4", "A100", "4090", "L20"]


def _limits(text: str, g: str) -> dict:
    i = text.index(g)
    return hardware_limits(text, [(g, i, i + len(g))])


@pytest.mark.parametrize("g", CARDS)
@pytest.mark.parametrize("form", ASKS)
def test_a_question_about_a_card_is_no_limit(form, g):
    assert _limits(form.format(g=g), g) == {}


@pytest.mark.parametrize("g", CARDS)
@pytest.mark.parametrize("form", REFUSALS)
def test_a_refusal_still_excludes_the_card(form, g):
    assert _limits(form.format(g=g), g).get("gpu_excluded") == [g]


JOBS = [("给 Qwen2.5-7B 做客服部署，并发 100 个会话，每个用户 20 token/s", "zh"),
        ("Serve Qwen2.5-7B for 100 concurrent chats, 20 tok/s each", "en"),
        ("fine-tune llama 3 8B with LoRA on 50k samples x 1k tokens", "en"),
        ("用 LoRA 微调 Llama 3 8B，5 万条数据，每条 1k token", "zh")]
FOLLOW = [("A10", "A10 不行吗？便宜很多啊"), ("L4", "L4 不行？"), ("T4", "why not T4? it's much cheaper"),
          ("A10", "为什么不用 A10"), ("L4", "why not L4?")]


@pytest.mark.parametrize("job,lang", JOBS)
@pytest.mark.parametrize("card,ask", FOLLOW)
def test_the_reply_leads_with_that_cards_verdict_for_the_job(core, job, lang, card, ask):
    state: dict = {}
    first, state = core.turn(job, state)
    assert first.status == "answer"
    reply, state = core.turn(ask, state)
    v = reply.verdict or {}
    gpu = core.kb.gpus[v["gpu"]].name if v.get("gpu") in core.kb.gpus else str(v.get("gpu") or "")
    first_line = reply.text.split("\n")[0]
    if card.lower() not in first.text.split("\n")[0].lower():   # the card is not already the pick
        assert card in gpu or card in first_line, (ask, reply.text[:400])
    assert card not in (reply.slots or {}).get("gpu_excluded", []), reply.slots
    assert "不可用" not in first_line and "excluded" not in first_line.lower(), first_line
