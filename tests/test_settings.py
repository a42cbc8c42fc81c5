"""One typed settings object for every entry point: `ask` and `serve` refuse what `doctor` flags, secrets never
shown; placeholder tokens copied from deploy/slack.env.example are caught."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from bot.records import config
from bot.records.errors import ConfigError
from bot.surfaces.cli.main import main
from bot.surfaces.slack.settings import PLACEHOLDERS, SlackSettings, is_placeholder

BOT = "xoxb-1111111111-2222222222-AbCdEfGhIjKlMnOp"
APP = "xapp-1-A0123456789-1234567890-0123456789abcdef"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for var in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "SLACK_API_BASE_URL", "PORT",
                "ADVISOR_LOG_FORMAT", "ADVISOR_LOG_LEVEL", "ADVISOR_DEFAULT_PROVIDER", "ADVISOR_SLASH_COMMAND"):
        monkeypatch.delenv(var, raising=False)


def ask(*args):
    return CliRunner().invoke(main, ["ask", *args], catch_exceptions=False)


def test_secrets_are_secretstr_and_never_in_a_repr(monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT)
    s = config.settings()
    assert s.slack_bot_token.get_secret_value() == BOT
    assert BOT not in repr(s) and BOT not in str(s.model_dump())


@pytest.mark.parametrize("var, value, says", [
    ("ADVISOR_DEFAULT_PROVIDER", "awz", "did you mean aws? use one of aliyun, aws, azure, chenjianyun, compshare, gcp"),
    ("ADVISOR_LOG_LEVEL", "LOUD", "ADVISOR_LOG_LEVEL='LOUD' is not a log level"),
    ("ADVISOR_LOG_FORMAT", "xml", "ADVISOR_LOG_FORMAT='xml' is not a log format"),
    ("PORT", "eighty", "PORT='eighty' is not a port number"),
    ("ADVISOR_SLASH_COMMAND", "gpu advisor", "is not a slash command"),
])
def test_ask_refuses_a_setting_doctor_flags(monkeypatch, var, value, says):
    monkeypatch.setenv(var, value)
    res = ask("lora finetune qwen2.5 7b")
    assert res.exit_code == 2 and says.lower() in res.output.lower(), res.output
    assert "Traceback" not in res.output and "Pick" not in res.output
    doc = CliRunner().invoke(main, ["doctor"], catch_exceptions=False)
    assert doc.exit_code == 1 and any(line.startswith("fail") and var in line for line in doc.output.splitlines())


def test_a_valid_default_provider_is_used(monkeypatch):
    monkeypatch.setenv("ADVISOR_DEFAULT_PROVIDER", "GCP")        # case does not matter
    res = ask("lora finetune qwen2.5 7b")
    assert res.exit_code == 0 and "Google Cloud" in res.output


@pytest.mark.parametrize("value", list(PLACEHOLDERS) + ["xoxb-your-token-here-1234"])
def test_placeholders_are_recognised(value):
    assert is_placeholder(value)


def test_real_looking_tokens_are_not_placeholders():
    assert not is_placeholder(BOT) and not is_placeholder(APP) and not is_placeholder("8f14e45fceea167a5a36dedd4bea2543")


def test_serve_and_doctor_refuse_the_example_tokens(monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-your-bot-token")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-your-app-level-token")
    with pytest.raises(ConfigError, match="SLACK_BOT_TOKEN still holds the placeholder"):
        SlackSettings.from_env("socket")
    doc = CliRunner().invoke(main, ["doctor"], catch_exceptions=False)
    fails = [line for line in doc.output.splitlines() if line.startswith("fail")]
    assert doc.exit_code == 1 and len([f for f in fails if "placeholder" in f]) == 2
    assert "ready" not in doc.output
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT)
    monkeypatch.setenv("SLACK_APP_TOKEN", APP)
    assert SlackSettings.from_env("socket").app_token == APP
