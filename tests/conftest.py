"""Shared fixtures: a temporary database per test, and the real knowledge base / core loaded once."""
from __future__ import annotations

import os
import tempfile

import pytest

# parsed-YAML and knowledge-base caches of the test run stay out of the developer's ~/.cache
os.environ["ADVISOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpu-advisor-cache-")


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
