"""Slack installations and OAuth states in PostgreSQL (`ADVISOR_DB=postgresql://...`): bot/store/installations.py's
SQL is portable (upserts with ON CONFLICT, `?` placeholders), so only the opening differs. Every replica reads the
same installs, and a state issued by one replica is consumed once by whichever receives the redirect."""
from __future__ import annotations

from bot.store.installations import Installations
from bot.store.pg import PgDatabase
from bot.store.tokens import TokenCipher

__all__ = ["PgInstallations"]


class PgInstallations(PgDatabase, Installations):
    def __init__(self, url: str, cipher: TokenCipher, timeout: float | None = None):
        self.cipher = cipher
        self._open(url)
