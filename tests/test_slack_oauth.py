"""Many workspaces: the OAuth install flow and the installation store, on SQLite always and on PostgreSQL when a
server answers (conftest.py's postgres_url; skipped saying why otherwise).

End to end: `gpu-advisor serve --http` with SLACK_CLIENT_ID/SECRET against the stand-in Slack API; two workspaces
install through GET /slack/install -> GET /slack/oauth_redirect (state cookie, one-time state, oauth.v2.access),
then a signed DM from each workspace is answered with that workspace's own token (the stub records the
Authorization header of every call). A forged, replayed or expired state is refused and exchanges no code. The
tokens are nowhere in the database in clear (rows and, for SQLite, the file's bytes), nor in the log. Store level:
MultiFernet rotation (new key first still opens old rows; rotate re-encrypts; the old key alone then fails).
"""
from __future__ import annotations

import html
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from slack_stub import (CLIENT_ID, CLIENT_SECRET, REPO, SlackStub, bot_env, event_callback, send, sign,
                        start_http)

SECRET = "8f742231b10e8888abcd991234567a5b"
TOKENS = {"TAAAA1": "xoxb-1001-2001-teamAtokenSECRETaaaa", "TBBBB2": "xoxb-1002-2002-teamBtokenSECRETbbbb"}


def _key() -> str:
    from bot.store.tokens import new_key
    return new_key()


@pytest.fixture(params=["sqlite", "postgres"])
def db_target(request, tmp_path):
    """An ADVISOR_DB for each backend: a fresh SQLite file, or the test session's PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "advisor.db")
    return request.getfixturevalue("postgres_url")


def _rows(target: str, keys: str):
    from bot.store.backend import open_installations
    from bot.store.tokens import TokenCipher
    return open_installations(target, TokenCipher(keys))


def _all_text(target: str) -> str:
    """Every value of the installation tables, and for SQLite the raw bytes of the file and its WAL."""
    tables = ("slack_installations", "slack_bots", "slack_oauth_states")
    if target.startswith("postgresql://"):
        import psycopg
        with psycopg.connect(target) as conn:
            return "\n".join(str(r) for t in tables for r in conn.execute(f"SELECT * FROM {t}").fetchall())
    import sqlite3
    conn = sqlite3.connect(target)
    text = "\n".join(str(r) for t in tables for r in conn.execute(f"SELECT * FROM {t}").fetchall())
    conn.close()
    files = [Path(target), Path(target + "-wal")]
    return text + "\n".join(p.read_bytes().decode("latin-1") for p in files if p.exists())


# ----- the store ---------------------------------------------------------------------------------------------------
def _installation(team: str, token: str, user: str = "UADMIN", at: float | None = None):
    from slack_sdk.oauth.installation_store import Installation
    return Installation(app_id="A0GPUADV", team_id=team, team_name=f"Team {team}", bot_token=token,
                        bot_id="BBOT", bot_user_id="UBOT", bot_scopes="chat:write,commands", user_id=user,
                        user_token=f"xoxp-{team}-usertoken-SECRET", installed_at=at or time.time())


def test_installation_store_round_trip_keeps_tokens_sealed(db_target):
    from bot.surfaces.slack.oauth import AdvisorInstallationStore
    key = _key()
    store = AdvisorInstallationStore(_rows(db_target, key))
    store.save(_installation("TAAAA1", TOKENS["TAAAA1"], at=1000.0))
    store.save(_installation("TBBBB2", TOKENS["TBBBB2"]))
    bot = store.find_bot(enterprise_id=None, team_id="TAAAA1")
    assert (bot.bot_token, bot.team_id, bot.bot_scopes) == (TOKENS["TAAAA1"], "TAAAA1", ["chat:write", "commands"])
    found = store.find_installation(enterprise_id=None, team_id="TBBBB2")
    assert (found.bot_token, found.user_token, found.user_id) == (TOKENS["TBBBB2"], "xoxp-TBBBB2-usertoken-SECRET",
                                                                  "UADMIN")
    # a later install by another user renews the workspace's bot token, also under the first user's record
    store.save(_installation("TAAAA1", "xoxb-1001-2001-teamAnewtokenSECRET", user="UOTHER", at=2000.0))
    assert store.find_installation(enterprise_id=None, team_id="TAAAA1", user_id="UADMIN").bot_token \
        == "xoxb-1001-2001-teamAnewtokenSECRET"
    assert store.find_bot(enterprise_id=None, team_id="TCCCC3") is None
    text = _all_text(db_target)
    for secret in (*TOKENS.values(), "xoxp-TBBBB2-usertoken-SECRET", "teamAnewtokenSECRET", "usertoken"):
        assert secret not in text
    store.delete_all(enterprise_id=None, team_id="TAAAA1")
    assert store.find_bot(enterprise_id=None, team_id="TAAAA1") is None
    assert store.find_installation(enterprise_id=None, team_id="TAAAA1") is None
    assert store.find_bot(enterprise_id=None, team_id="TBBBB2") is not None


def test_rotating_the_key_with_multifernet(db_target):
    from bot.store.tokens import TokenKeyError
    old, new = _key(), _key()
    _rows(db_target, old).save_bot({"team_id": "TAAAA1", "bot_token": TOKENS["TAAAA1"], "bot_id": "B",
                                    "bot_user_id": "U", "installed_at": time.time()})
    with pytest.raises(TokenKeyError) as wrong:                  # a key that never sealed these rows
        _rows(db_target, new).find_bot(None, "TAAAA1")
    assert "ADVISOR_TOKEN_KEY" in wrong.value.render() and TOKENS["TAAAA1"] not in wrong.value.render()
    both = _rows(db_target, f"{new},{old}")                      # the new key first, the old one still listed
    assert both.find_bot(None, "TAAAA1")["bot_token"] == TOKENS["TAAAA1"]
    before = _all_text(db_target)
    assert both.rotate_keys() == 1
    assert _all_text(db_target) != before                        # re-encrypted
    assert _rows(db_target, new).find_bot(None, "TAAAA1")["bot_token"] == TOKENS["TAAAA1"]
    with pytest.raises(TokenKeyError):
        _rows(db_target, old).check_keys()                       # the old key alone no longer opens them


def test_states_are_one_time_and_expire(db_target):
    rows = _rows(db_target, _key())
    state = rows.issue_state()
    assert len(state) >= 32
    assert rows.consume_state(state) is True
    assert rows.consume_state(state) is False                    # replayed
    assert rows.consume_state("forged-state") is False
    assert rows.consume_state(rows.issue_state(ttl_s=-1)) is False   # expired


def test_malformed_or_missing_key_is_a_clear_config_error():
    from bot.records.errors import ConfigError
    from bot.store.tokens import TokenCipher
    with pytest.raises(ConfigError, match="ADVISOR_TOKEN_KEY is not set"):
        TokenCipher("")
    with pytest.raises(ConfigError, match="key 2 of 2 is not a Fernet key") as bad:
        TokenCipher(f"{_key()},not-a-key-but-secretish")
    assert "secretish" not in bad.value.render()


def test_scopes_match_the_manifest():
    import yaml
    from bot.surfaces.slack.oauth import BOT_SCOPES
    manifest = yaml.safe_load((REPO / "deploy" / "slack-app-manifest.yml").read_text(encoding="utf-8"))
    assert sorted(BOT_SCOPES) == sorted(manifest["oauth_config"]["scopes"]["bot"])


# ----- the serve process ---------------------------------------------------------------------------------------------
class Server:
    def __init__(self, proc: subprocess.Popen, url: str, log: list[str]):
        self.proc, self.url, self.log = proc, url, log

    def get(self, path: str, cookie: str | None = None) -> tuple[int, dict, str]:
        req = urllib.request.Request(self.url + path, headers={"Cookie": cookie} if cookie else {})
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(req, timeout=15) as resp:
                return resp.status, dict(resp.headers), resp.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), err.read().decode()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def serve_oauth(db: str, stub: SlackStub, key: str) -> Server:
    env = bot_env(SLACK_CLIENT_ID=CLIENT_ID, SLACK_CLIENT_SECRET=CLIENT_SECRET, SLACK_SIGNING_SECRET=SECRET,
                  ADVISOR_TOKEN_KEY=key, SLACK_API_BASE_URL=stub.api_url, ADVISOR_DB=db, ADVISOR_LOG_LEVEL="DEBUG",
                  PORT="0")
    return Server(*start_http(env, timeout=60))


def start_install(server: Server) -> tuple[str, str]:
    """GET /slack/install: (state, cookie) as a browser would keep them."""
    status, headers, page = server.get("/slack/install")
    assert status == 200, page
    link = html.unescape(re.search(r'<a href="([^"]+)"', page).group(1))
    state = re.search(r"[?&]state=([^&]+)", link).group(1)
    assert f"client_id={CLIENT_ID}" in link and "scope=" in link
    cookie = headers.get("Set-Cookie", "").split(";")[0]
    assert cookie == f"slack-app-oauth-state={state}"
    return state, cookie


def install(server: Server, stub: SlackStub, team: str) -> None:
    state, cookie = start_install(server)
    code = stub.authorize_code(team, TOKENS[team])
    status, _, page = server.get(f"/slack/oauth_redirect?code={code}&state={state}", cookie)
    assert status == 200, page


@pytest.fixture
def oauth_server(db_target):
    stub = SlackStub()
    key = _key()
    server = serve_oauth(db_target, stub, key)
    yield server, stub, db_target, key
    server.proc.terminate()
    try:
        assert server.proc.wait(15) == 0, "\n".join(server.log[-20:])
    except subprocess.TimeoutExpired:
        server.proc.kill()
        raise
    finally:
        stub.close()


def _dm(server: Server, team: str, channel: str, n: int) -> None:
    event = {"type": "message", "channel_type": "im", "channel": channel, "user": f"U{team}", "team": team,
             "text": "serve llama 3 8b for 4 users", "ts": f"{time.time():.6f}"}
    body = event_callback(event, f"Ev{team}{n}{os.getpid()}", team=team)
    status, text, _ = send(server.url + "/slack/events", body, "application/json", sign(body, SECRET))
    assert status == 200, text


def test_two_workspaces_install_and_each_is_answered_with_its_own_token(oauth_server):
    server, stub, db, key = oauth_server
    for team in TOKENS:
        install(server, stub, team)
    assert len(stub.of("oauth.v2.access", True)) == 2
    for n, team in enumerate(TOKENS):
        _dm(server, team, f"D{team}", n)
    posts = stub.wait_for(lambda s: (p := [c for c in s.of("chat.postMessage", True)
                                           if c.body.get("channel", "").startswith("DT")]) and len(p) >= 2 and p, 60)
    used = {c.body["channel"]: c.headers.get("authorization") for c in posts}
    assert used == {f"D{t}": f"Bearer {tok}" for t, tok in TOKENS.items()}
    # a workspace that never installed is not answered (Bolt's authorize finds no bot)
    _dm(server, "TZZZZ9", "DTZZZZ9", 9)
    stub.settle()
    assert not [c for c in stub.of("chat.postMessage") if c.body.get("channel") == "DTZZZZ9"]
    text = _all_text(db)
    assert not any(tok in text for tok in TOKENS.values())
    assert not any(tok in line for tok in TOKENS.values() for line in server.log)
    assert key not in "\n".join(server.log)


def test_forged_replayed_and_expired_states_are_refused(oauth_server):
    server, stub, db, key = oauth_server
    state, cookie = start_install(server)
    code = stub.authorize_code("TAAAA1", TOKENS["TAAAA1"])
    status, _, _ = server.get(f"/slack/oauth_redirect?code={code}&state=forged{state[6:]}",
                              f"slack-app-oauth-state=forged{state[6:]}")
    assert status == 401                                          # not a state this app issued
    status, _, _ = server.get(f"/slack/oauth_redirect?code={code}&state={state}")
    assert status == 400                                          # no state cookie: another browser
    expired, expired_cookie = start_install(server)
    rows = _rows(db, key)
    with rows._write() as conn:
        conn.execute("UPDATE slack_oauth_states SET expire_at = ? WHERE state = ?", (time.time() - 1, expired))
    status, _, _ = server.get(f"/slack/oauth_redirect?code={code}&state={expired}", expired_cookie)
    assert status == 401
    assert stub.of("oauth.v2.access") == []                       # no code was exchanged for any of them
    status, _, _ = server.get(f"/slack/oauth_redirect?code={code}&state={state}", cookie)
    assert status == 200 and len(stub.of("oauth.v2.access", True)) == 1
    status, _, _ = server.get(f"/slack/oauth_redirect?code={code}&state={state}", cookie)
    assert status == 401                                          # the same state twice
    assert rows.find_bot(None, "TAAAA1")["bot_token"] == TOKENS["TAAAA1"]
    assert any("OAuth redirect refused" in line for line in server.log)


# ----- settings, doctor and start-up ---------------------------------------------------------------------------------
OAUTH_ENV = {"SLACK_CLIENT_ID": CLIENT_ID, "SLACK_CLIENT_SECRET": CLIENT_SECRET, "SLACK_SIGNING_SECRET": SECRET}


@pytest.mark.parametrize("env, mode, says", [
    ({"SLACK_CLIENT_ID": CLIENT_ID}, "http", "SLACK_CLIENT_ID is set but SLACK_CLIENT_SECRET is not"),
    ({**OAUTH_ENV, "SLACK_APP_TOKEN": "xapp-1-A111-2222-stubapptoken"}, "socket", "need HTTP mode"),
    ({**OAUTH_ENV, "SLACK_CLIENT_ID": "not-an-id"}, "http", "SLACK_CLIENT_ID is malformed"),
    (OAUTH_ENV, "http", "ADVISOR_TOKEN_KEY is not set"),                       # no key: no token can be stored
    ({**OAUTH_ENV, "ADVISOR_TOKEN_KEY": "c2hvcnQ="}, "http", "ADVISOR_TOKEN_KEY is malformed"),
    ({"SLACK_BOT_TOKEN": "xoxb-1111-2222-stubtokenvalue", "SLACK_SIGNING_SECRET": SECRET,
      "ADVISOR_SLACK_ADMINS": "U0ADMIN1, jane@example.com"}, "http", "'jane@example.com', which is not a Slack user"),
])
def test_oauth_settings_refuse_what_cannot_work(monkeypatch, env, mode, says):
    from bot.records.errors import ConfigError
    from bot.surfaces.slack.settings import SlackSettings
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=says) as err:
        SlackSettings.from_env(mode)
    assert CLIENT_SECRET not in err.value.render() and "c2hvcnQ=" not in err.value.render()


def test_oauth_settings_without_a_bot_token(monkeypatch):
    from bot.surfaces.slack.settings import SlackSettings
    key = _key()
    for name, value in {**OAUTH_ENV, "ADVISOR_TOKEN_KEY": key}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("ADVISOR_SLACK_ADMINS", "U0ADMIN1, W0ADMIN2")
    settings = SlackSettings.from_env("http")
    assert settings.multi_workspace and settings.bot_token == ""
    assert settings.admins == ("U0ADMIN1", "W0ADMIN2")
    assert CLIENT_SECRET in settings.secrets() and key in settings.secrets()      # redacted from every log line
    assert CLIENT_SECRET not in repr(settings) and key not in repr(settings)


def test_doctor_and_start_up_refuse_a_key_that_does_not_open_the_stored_tokens(tmp_path, monkeypatch, core):
    from bot.store.tokens import TokenKeyError
    from bot.surfaces.doctor import check_slack
    db, old = tmp_path / "advisor.db", _key()
    _rows(str(db), old).save_bot({"team_id": "TAAAA1", "bot_token": TOKENS["TAAAA1"], "bot_id": "B",
                                  "bot_user_id": "U", "installed_at": time.time()})
    for name, value in {**OAUTH_ENV, "ADVISOR_DB": str(db), "ADVISOR_TOKEN_KEY": _key()}.items():
        monkeypatch.setenv(name, value)
    fails = [c for c in check_slack() if c.status == "fail"]
    assert len(fails) == 1 and "ADVISOR_TOKEN_KEY does not hold" in fails[0].text
    assert TOKENS["TAAAA1"] not in fails[0].text + fails[0].fix
    from bot.surfaces.service import Service
    from bot.surfaces.slack.app import build_app
    from bot.surfaces.slack.settings import SlackSettings
    with pytest.raises(TokenKeyError, match="ADVISOR_TOKEN_KEY does not hold"):
        build_app(SlackSettings.from_env("http"), Service(core=core, db=db))
    monkeypatch.setenv("ADVISOR_TOKEN_KEY", f"{_key()},{old}")
    assert [c.text for c in check_slack() if c.status == "fail"] == []
    assert any("1 stored token row(s) open" in c.text for c in check_slack())


# ----- per-team settings on the App Home -----------------------------------------------------------------------------
def _interaction(server: Server, payload: dict) -> tuple[int, str]:
    import json
    import urllib.parse
    body = urllib.parse.urlencode({"payload": json.dumps(payload)})
    status, text, _ = send(server.url + "/slack/events", body, "application/x-www-form-urlencoded",
                           sign(body, SECRET))
    return status, text


def _submission(team: str, user: str, for_team: str, currency: str | None, days: str | None) -> dict:
    option = {"value": currency} if currency else None
    return {"type": "view_submission", "team": {"id": team}, "user": {"id": user, "team_id": team},
            "api_app_id": "A0GPUADV", "trigger_id": "1.2.trig",
            "view": {"id": "V0MODAL", "type": "modal", "callback_id": "team_settings", "private_metadata": for_team,
                     "team_id": team, "state": {"values": {
                         "ts_provider": {"value": {"type": "static_select", "selected_option": None}},
                         "ts_currency": {"value": {"type": "static_select", "selected_option": option}},
                         "ts_retention": {"value": {"type": "number_input", "value": days}}}}}}


def _home(server: Server, stub: SlackStub, team: str, user: str) -> dict:
    import json
    body = event_callback({"type": "app_home_opened", "user": user, "tab": "home", "channel": f"D{user}"},
                          f"EvHome{user}{time.time_ns()}", team=team)
    assert send(server.url + "/slack/events", body, "application/json", sign(body, SECRET))[0] == 200
    call = stub.wait_for(lambda s: [c for c in s.of("views.publish", True) if c.body.get("user_id") == user])[-1]
    assert call.headers.get("authorization") == f"Bearer {TOKENS[team]}"
    view = call.body["view"]
    return json.loads(view) if isinstance(view, str) else view


def test_team_settings_on_the_app_home_feed_that_teams_answers(oauth_server):
    """Team A's admin (who installed it) sets currency CNY and 30 days' retention on the App Home: team A's answers
    carry the price in CNY, team B's stay in USD only; a member of B cannot change A's settings, and 0 days is
    refused under its input."""
    import json
    from bot.store.backend import open_slack_state
    server, stub, db, _key = oauth_server
    for team in TOKENS:
        install(server, stub, team)
    admin_a, admin_b = "UTAAAA1ADMIN", "UTBBBB2ADMIN"            # the installers (tests/slack_stub.py)
    home = json.dumps(_home(server, stub, "TAAAA1", admin_a))
    assert "team_settings_edit" in home and "until pruned by hand" in home
    member = json.dumps(_home(server, stub, "TAAAA1", "UTAAAA1MEMBER"))
    assert "team_settings_edit" not in member and "Only this workspace's admins" in member
    click = {"type": "block_actions", "team": {"id": "TAAAA1"}, "user": {"id": admin_a, "team_id": "TAAAA1"},
             "api_app_id": "A0GPUADV", "trigger_id": "1.2.trig", "container": {"type": "view", "view_id": "V0HOME"},
             "actions": [{"action_id": "team_settings_edit", "block_id": "team_settings_actions", "type": "button",
                          "value": "edit"}]}
    assert _interaction(server, click)[0] == 200
    opened = stub.wait_for(lambda s: s.of("views.open", True))[0]
    assert opened.headers.get("authorization") == f"Bearer {TOKENS['TAAAA1']}"
    view = opened.body["view"]
    assert (json.loads(view) if isinstance(view, str) else view)["private_metadata"] == "TAAAA1"
    status, text = _interaction(server, _submission("TBBBB2", admin_b, "TAAAA1", "CNY", "30"))
    assert status == 200 and json.loads(text)["response_action"] == "errors"       # B's admin, A's settings
    status, text = _interaction(server, _submission("TAAAA1", admin_a, "TAAAA1", "CNY", "0"))
    assert json.loads(text)["errors"].keys() == {"ts_retention"}
    state = open_slack_state(db)
    assert state.team_settings("TAAAA1") == {} and state.team_settings("TBBBB2") == {}
    status, text = _interaction(server, _submission("TAAAA1", admin_a, "TAAAA1", "CNY", "30"))
    assert (status, text) == (200, "")
    assert {k: v for k, v in state.team_settings("TAAAA1").items() if k != "updated"} == \
        {"currency": "CNY", "retention_days": 30, "updated_by": admin_a}
    for n, team in enumerate(TOKENS):
        _dm(server, team, f"D{team}", 10 + n)
    posts = stub.wait_for(lambda s: (p := {c.body["channel"]: json.dumps(c.body, ensure_ascii=False)
                                           for c in s.of("chat.postMessage", True)
                                           if c.body.get("channel") in ("DTAAAA1", "DTBBBB2")}) and len(p) == 2 and p,
                          60)
    assert "USD/h" in posts["DTAAAA1"] and re.search(r"≈ [\d.,]+ CNY/h in your currency", posts["DTAAAA1"])
    assert "USD/h" in posts["DTBBBB2"] and "CNY" not in posts["DTBBBB2"]


def test_answer_defaults_user_over_workspace_over_server(tmp_path):
    """Default cloud and currency of an answer: the user's own App Home choice, else the workspace's, else none
    (the server's ADVISOR_DEFAULT_PROVIDER, prices as published)."""
    from types import SimpleNamespace
    from bot.store.slack_state import SlackState
    from bot.surfaces.slack.app import SlackBot
    state = SlackState(tmp_path / "advisor.db")
    bot = SimpleNamespace(state=state)
    assert SlackBot._defaults(bot, "TA", "U1") == {"provider": None, "currency": None}
    state.set_team_settings("TA", "UADMIN", provider="aws", currency="CNY", retention_days=None)
    assert SlackBot._defaults(bot, "TA", "U1") == {"provider": "aws", "currency": "CNY"}
    state.set_pref("TA", "U1", currency="EUR")
    assert SlackBot._defaults(bot, "TA", "U1") == {"provider": "aws", "currency": "EUR"}
    assert SlackBot._defaults(bot, "TB", "U1") == {"provider": None, "currency": None}     # another workspace


def test_admins_in_one_workspace_mode_and_an_uninstalled_team(tmp_path):
    """ADVISOR_SLACK_ADMINS makes admins without OAuth; in OAuth mode the installer is one; a team with no bot
    on file gets no client (its job is finished as undeliverable, not posted with another team's token)."""
    from types import SimpleNamespace
    from bot.surfaces.slack.app import SlackBot
    from bot.surfaces.slack.oauth import TeamClients
    single = SimpleNamespace(settings=SimpleNamespace(admins=("U0ADMIN1",)), teams=TeamClients(None))
    assert SlackBot.is_team_admin(single, "TA", "U0ADMIN1") and not SlackBot.is_team_admin(single, "TA", "U0OTHER")
    rows = _rows(str(tmp_path / "advisor.db"), _key())
    from bot.surfaces.slack.oauth import AdvisorInstallationStore
    AdvisorInstallationStore(rows).save(_installation("TAAAA1", TOKENS["TAAAA1"], user="UINSTALLER"))
    teams = TeamClients(None, rows, make_client=lambda token: SimpleNamespace(token=token))
    multi = SimpleNamespace(settings=SimpleNamespace(admins=()), teams=teams)
    assert SlackBot.is_team_admin(multi, "TAAAA1", "UINSTALLER")
    assert not SlackBot.is_team_admin(multi, "TBBBB2", "UINSTALLER")             # installer of A only
    assert teams.outbound("TAAAA1").client.token == TOKENS["TAAAA1"]
    with pytest.raises(LookupError, match="not installed in workspace TBBBB2"):
        teams.outbound("TBBBB2")
