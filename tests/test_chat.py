"""`gpu-advisor chat` (issue 33.4): a listed choice is picked by its number, 'details' shows the last answer's details,
'help' is answered without an audit record, Ctrl-C clears the line and the conversation goes on, and the lines typed
are kept in a history file where one is wanted."""
from __future__ import annotations

import builtins

from click.testing import CliRunner

from bot.store.audit import AuditLog
from bot.records import config
from bot.surfaces.cli import chat
from bot.surfaces.cli.main import main


def _chat(lines: str):
    res = CliRunner().invoke(main, ["chat"], input=lines, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def _records() -> list[dict]:
    return AuditLog(config.db_target()).list(limit=100)


def test_a_number_picks_the_listed_choice():
    out = _chat("finetune a model\n2\nquit\n")
    options = next(x for x in out.split("\n") if x.strip().startswith("1) "))
    second = options.split("2) ")[1].split("   ")[0].strip()
    assert f"  -> {second}" in out
    questions = [r["question"] for r in _records()]
    assert second in questions and "2" not in questions          # the choice was asked, not the digit


def test_details_of_the_last_answer_and_help_is_not_audited():
    out = _chat("help\nlora finetune qwen2.5 7b, tight budget\ndetails\nquit\n")
    assert "Also considered:" in out and "Assumed:" in out                 # the details, after the short answer
    assert [r["question"] for r in _records()] == ["lora finetune qwen2.5 7b, tight budget"]


def test_ctrl_c_clears_the_line_and_the_chat_goes_on(monkeypatch):
    typed = iter([KeyboardInterrupt, "what is nvlink", "quit"])

    def fake_input(prompt=""):
        item = next(typed)
        if item is KeyboardInterrupt:
            raise KeyboardInterrupt
        return item
    monkeypatch.setattr(builtins, "input", fake_input)
    res = CliRunner().invoke(main, ["chat"], catch_exceptions=False)
    assert res.exit_code == 0 and "NVLink" in res.output


def test_history_file_follows_the_setting(monkeypatch, tmp_path):
    monkeypatch.setenv("ADVISOR_CHAT_HISTORY", str(tmp_path / "h"))
    assert chat.history_path() == tmp_path / "h"
    monkeypatch.setenv("ADVISOR_CHAT_HISTORY", "")
    assert chat.history_path() is None
    monkeypatch.delenv("ADVISOR_CHAT_HISTORY")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert chat.history_path() == tmp_path / "gpu-advisor" / "chat_history"
