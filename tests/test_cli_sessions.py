"""`ask` sessions (issue 18): each `ask` is a new conversation unless --session or --continue; text that is not
valid UTF-8 (an argument, a --batch file, chat input) is read with replacement, never a crash."""
from __future__ import annotations

import json

from click.testing import CliRunner

from bot.surfaces.cli.main import clean_arg, main


def ask(*args, input=None):
    res = CliRunner().invoke(main, ["ask", "--json", *args], input=input, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_each_ask_without_session_is_a_fresh_conversation():
    first = ask("用 LoRA 微调 Qwen2.5-7B，预算有限")
    second = ask("need a gpu for fine-tuning")
    assert first["session"] != second["session"]
    assert first["lang"] == "zh" and second["lang"] == "en"          # the language of this question, not the last
    assert "model" not in second["slots"]                            # nor the previous question's model
    assert second["status"] == "follow_up"


def test_continue_takes_up_the_previous_ask():
    first = ask("fine-tune a model for me")
    assert first["status"] == "follow_up"
    second = ask("--continue", "qwen2.5 14b, qlora")
    assert second["session"] == first["session"]
    assert second["status"] == "answer" and second["slots"]["model"] == "qwen2.5-14b"
    third = ask("serve llama 3.1 8b")                                 # and a plain ask starts afresh again
    assert third["session"] != first["session"]


def test_continue_with_nothing_to_continue_says_so():
    res = CliRunner().invoke(main, ["ask", "--continue", "qwen2.5 14b"])
    assert res.exit_code == 2 and "no earlier `ask` to continue" in res.output


def test_invalid_utf8_argument_is_replaced_not_fatal():
    # Python hands bytes that are not UTF-8 in argv to the program as lone surrogates
    raw = b"lora finetune qwen2.5 7b \xff\xfe".decode("utf-8", "surrogateescape")
    assert clean_arg(raw).endswith("\ufffd\ufffd")
    out = ask(raw)
    assert out["status"] == "answer" and out["slots"]["model"] == "qwen2.5-7b"


def test_invalid_utf8_in_a_batch_file_is_replaced(tmp_path):
    f = tmp_path / "q.txt"
    f.write_bytes(b"serve llama 3.1 8b \xc3\x28\n\xff\xfe\xfd\n")
    res = CliRunner().invoke(main, ["ask", "--batch", str(f), "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.output.splitlines()]
    assert len(lines) == 2 and lines[0]["intent"] == "inference"


def test_chat_reads_invalid_utf8_input():
    res = CliRunner().invoke(main, ["chat"], input=b"lora finetune qwen2.5 7b \xff\nquit\n", catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "qwen" in res.output.lower() or "Qwen" in res.output
