"""Shared fixtures: a temporary database per test, and the real knowledge base / core loaded once."""
from __future__ import annotations

import os
import tempfile

import pytest

# parsed-YAML and knowledge-base caches of the test run stay out of the developer's ~/.cache
os.environ["ADVISOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpu-advisor-cache-")


def _checked_turns() -> None:
    """Every reply any test gets from Core.turn is checked by the critic's consistency invariant
    (bot/render/consistency.py, issue 29): at run time a line that breaks it is left out and rule_trace says so; in
    tests that trace is a failure, whatever else the test checks."""
    from bot.conversation.turn import Core
    if getattr(Core.turn, "_checked", False):
        return
    turn = Core.turn

    def checked(self, *args, **kwargs):
        reply, state = turn(self, *args, **kwargs)
        broken = [e for e in reply.rule_trace if e.get("rule") == "critic.answer-consistency" and e.get("fired")]
        assert not broken, f"the answer contradicts itself: {broken[0]['because']}"
        # the critic's verdict-agreement invariant (bot/plan/critic.verdict_problems): a verdict against its numbers
        wrong = [e for e in reply.rule_trace if e.get("rule") == "critic.verdict-agreement" and e.get("fired")]
        assert not wrong, f"a verdict contradicts its plan: {wrong[0]['because']}"
        return reply, state

    checked._checked = True
    Core.turn = checked


_checked_turns()


@pytest.fixture(autouse=True)
def _isolated_db(tmp_path, monkeypatch):
    """No test writes to a developer's real ~/.local/share database."""
    monkeypatch.setenv("ADVISOR_DB", str(tmp_path / "advisor.db"))
    for var in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "ADVISOR_PRICES_FILE"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="session")
def core():
    from bot.conversation.turn import Core
    return Core.load()


@pytest.fixture(scope="session")
def kb(core):
    return core.kb


@pytest.fixture(scope="session")
def postgres_server():
    """A throwaway PostgreSQL database for this test session (dropped after), or a skip saying why there is none.

    The server is ADVISOR_TEST_POSTGRES_URL, else the local one (postgresql://postgres@127.0.0.1:5432/postgres,
    as CI starts it). Yields the URL of the new database.
    """
    import uuid
    try:
        import psycopg
    except ImportError:                                    # pragma: no cover - psycopg is a dependency
        pytest.skip("PostgreSQL tests skipped: psycopg is not installed")
    admin = os.environ.get("ADVISOR_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    try:
        conn = psycopg.connect(admin, connect_timeout=3, autocommit=True)
    except psycopg.Error as exc:
        pytest.skip(f"PostgreSQL tests skipped: no server answers at ADVISOR_TEST_POSTGRES_URL or the default "
                    f"127.0.0.1:5432 ({str(exc).strip().splitlines()[0] if str(exc).strip() else exc})")
    name = f"gpu_advisor_test_{uuid.uuid4().hex[:12]}"
    with conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    from urllib.parse import urlsplit, urlunsplit
    url = urlunsplit(urlsplit(admin)._replace(path=f"/{name}"))
    yield url
    from bot.store.pg import close_pools
    close_pools()
    with psycopg.connect(admin, connect_timeout=3, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def postgres_url(postgres_server):
    """The session's database, emptied for this test (schema dropped, pools closed after)."""
    import psycopg
    from bot.store.pg import close_pools
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    yield postgres_server
    close_pools()
