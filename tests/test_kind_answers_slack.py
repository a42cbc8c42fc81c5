"""The issue 17 check on Slack too: a rendering, vision, diffusion or speech question asked in a signed Slack event,
in English and in Chinese, is answered in Block Kit without an LLM token rate or a "7B model" assumption (the
Block Kit layout words its sections itself, so the plain-text check of test_kind_answers.py does not cover it)."""
from __future__ import annotations

import json

import pytest

from test_kind_answers import NO_LLM
from test_slack_app import bot, dm, stub, uid, wait_posts  # noqa: F401

QUESTIONS = [
    "Blender Cycles rendering of a product animation, what cloud GPU?",
    "yolov8n 视频流检测部署，16路摄像头，要实时",
    "an SDXL image API that must sustain 5 images per second",
    "把 whisper-small 部署成转写接口，预算有限",
]


def spoken_blocks(body: dict) -> str:
    """Every text the answer's blocks show but the sources line (titles of cited pages may say 'tokens')."""
    shown = [b for b in body.get("blocks") or [] if b.get("type") != "context"]
    return json.dumps(shown, ensure_ascii=False) + (body.get("text") or "").split("\nSources")[0].split("\n来源")[0]


@pytest.mark.parametrize("question", QUESTIONS, ids=[q[:24] for q in QUESTIONS])
def test_slack_answers_to_non_llm_jobs_never_speak_of_tokens(bot, stub, question):
    channel = uid("D")
    bot.event(dm(question, channel, uid("U")))
    [post] = wait_posts(stub, channel)
    assert post.body.get("blocks"), post.body
    text = spoken_blocks(post.body)
    assert not NO_LLM.search(text), NO_LLM.search(text)


def test_the_check_catches_a_language_model_answer(bot, stub):
    """The same check on an LLM serving answer finds its token rate: the test above can fail."""
    channel = uid("D")
    bot.event(dm("serve qwen2.5 7b for 10 users", channel, uid("U")))
    [post] = wait_posts(stub, channel)
    assert NO_LLM.search(spoken_blocks(post.body))
