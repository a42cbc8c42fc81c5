"""A config.json pasted into a question (issue 17): found in a code block or bare, read as JSON, sized through the
same reader as `estimate --config`, and said back; a broken paste gets what is wrong and how to paste it. The
Slack tests send signed events with the text Slack delivers (a code block, its &amp;-escapes, curly quotes)."""
from __future__ import annotations

import json

import pytest

from bot.conversation.pasted import find_config, model_card
from bot.estimate.hfconfig import essentials, model_from_config
from test_hfconfig import DEEPSEEK_V3, LLAMA_31_8B
from test_slack_answers import press
from test_slack_app import all_text, bot, dm, responses, stub, uid, wait_posts  # noqa: F401


@pytest.mark.parametrize("text", [
    "serve this for 10 users\n```json\n" + json.dumps(LLAMA_31_8B, indent=2) + "\n```",
    "serve this for 10 users ```" + json.dumps(LLAMA_31_8B) + "```",
    "serve this for 10 users " + json.dumps(LLAMA_31_8B),
    "serve this for 10 users " + json.dumps(LLAMA_31_8B).replace('"', "“", 7).replace('"', "”", 5),
])
def test_a_config_is_cut_out_of_the_question_whichever_way_it_was_pasted(text):
    found = find_config(text)
    assert found.error is None and found.config["hidden_size"] == 4096
    assert found.text.strip() == "serve this for 10 users"


def test_a_broken_paste_says_where_and_a_question_with_braces_is_not_a_config():
    found = find_config('finetune this ```{"hidden_size": 4096,\n "num_hidden_layers": 32,}```')
    assert found.config is None and found.error["line"] == 2 and "double quotes" in found.error["reason"]
    assert find_config('```["hidden_size", 4096]```').error["reason"].startswith("a JSON list")
    assert find_config("what does {batch} mean in a {prompt} template?").config is None


def test_the_kept_part_of_a_config_sizes_the_same_model():
    for cfg in (LLAMA_31_8B, DEEPSEEK_V3, {"model_type": "llava", "vision_config": {"hidden_size": 1024},
                                           "text_config": LLAMA_31_8B, "id2label": {str(i): i for i in range(50)}}):
        full, kept = model_from_config(cfg)[0], model_from_config(essentials(cfg))[0]
        assert kept.model_dump() == full.model_dump()
        assert len(json.dumps(essentials(cfg))) < 1000


def test_model_cards_are_repository_ids_not_paths():
    assert model_card("serve mistralai/Magistral-Small-2509 please") == "mistralai/Magistral-Small-2509"
    assert model_card("see https://huggingface.co/acme/foo-v2 for it") == "acme/foo-v2"
    assert model_card("finetune on data/train.jsonl") is None


def test_slack_code_block_config_is_sized_and_said_back(bot, stub):
    channel = uid("D")
    block = json.dumps({**LLAMA_31_8B, "_name_or_path": "acme/llama-8b-r&d"}, indent=1)
    text = "lora finetune this one\n```" + block.replace("&", "&amp;") + "```"        # Slack escapes & < >
    user = uid("U")
    bot.event(dm(text, channel, user))
    [post] = wait_posts(stub, channel)
    # what was assumed is in the details: the Details button brings them (Slack escapes the & again on the way out)
    fields, name = press(stub, post.body, post.answer["ts"], user, "details")
    bot.form(fields)
    [details] = stub.wait_for(lambda s: responses(s, name))
    body = all_text(details)
    assert "architecture from the pasted config: acme/llama-8b-r&amp;d" in body and "8.03B parameters" in body


def test_slack_broken_config_gets_the_fix_in_chinese(bot, stub):
    channel = uid("D")
    bot.event(dm("用这个 config 微调：```{\"hidden_size\": 4096, \"num_hidden_layers\": 32,}```", channel, uid("U")))
    [post] = wait_posts(stub, channel)
    assert "不是合法的 JSON" in all_text(post) and "代码块" in all_text(post)
