"""What every surface does around a turn: load the session, run the core, save the session, write the audit record.

Shared by the CLI and the Slack app so the two cannot drift; it knows nothing of click or Slack payloads.
"""
from __future__ import annotations

import copy
import dataclasses
import logging
import threading
import time
from pathlib import Path
from typing import Any

from bot.records import config
from bot.store.backend import open_audit, open_sessions
from bot.conversation.turn import Core
from bot.store.sessions import session_id, session_key

log = logging.getLogger("gpu_advisor.turn")
_LOCK = threading.Lock()
_CORE: Core | None = None


def shared_core() -> Core:
    """The process-wide core: knowledge and rules are loaded once, on first use."""
    global _CORE
    with _LOCK:
        if _CORE is None:
            _CORE = Core.load()
        return _CORE


class Service:
    """`metrics=True` (under `serve`) counts every turn in the Prometheus metrics (bot/surfaces/metrics.py)."""

    def __init__(self, core: Core | None = None, db: Path | str | None = None, metrics: bool = False):
        provider = config.validate().advisor_default_provider   # every setting checked before any work
        self.core = core or shared_core()
        if provider != config.DEFAULT_PROVIDER:          # a misspelt ADVISOR_DEFAULT_PROVIDER stops every surface
            config.check_provider(self.core.kb.providers, provider)
        self.default_provider = provider                 # the process-wide core may predate the setting
        self._cores: dict[str, Core] = {}
        target = db if isinstance(db, str) and db.lower().startswith(config.DB_URL_SCHEMES) else (
            Path(db) if db else config.db_target())
        self.audit = open_audit(target)                  # SQLite file, or PostgreSQL for a postgresql:// URL
        self.sessions = open_sessions(target)
        self.sessions.purge_expired()          # expired conversations are deleted, not only ignored
        self.metrics = None
        if metrics:
            from bot.surfaces import metrics as m
            m.bind(self)
            self.metrics = m

    def core_for(self, default_provider: str | None) -> Core:
        """The core with another default cloud (a Slack user's App Home setting); same knowledge, rules, parser."""
        if not default_provider or default_provider == self.core.advisor.default_provider \
                or default_provider not in self.core.kb.providers:
            return self.core
        with _LOCK:
            if default_provider not in self._cores:
                advisor = copy.copy(self.core.advisor)
                advisor.default_provider = default_provider
                self._cores[default_provider] = dataclasses.replace(self.core, advisor=advisor)
            return self._cores[default_provider]

    def ask(self, text: str, *, surface: str, user: str = "", team: str = "", channel: str = "", thread: str = "",
            session: str | None = None, event_id: str | None = None, default_provider: str | None = None
            ) -> dict[str, Any]:
        """One turn; returns the `ask --json` object (advice_id, session, status, ... as in DESIGN.md)."""
        start = time.perf_counter()
        try:
            out = self._turn(text, surface=surface, user=user, team=team, channel=channel, thread=thread,
                             session=session, event_id=event_id, default_provider=default_provider)
        except Exception:
            self._observe(surface, "error", time.perf_counter() - start, None, None)
            raise
        self._observe(surface, out["status"], time.perf_counter() - start, out["advice_id"], out.get("intent"))
        return out

    def _observe(self, surface: str, status: str, seconds: float, advice_id: str | None, intent: str | None) -> None:
        """One structured log line per turn (surface, advice id, intent, status, latency: never the question or a
        token), and the metrics when they are on."""
        fields = {"surface": surface, "advice_id": advice_id, "intent": intent, "status": status,
                  "latency_ms": round(seconds * 1000, 1)}
        log.info("turn " + " ".join(f"{k}={'-' if v is None else v}" for k, v in fields.items()), extra=fields)
        if self.metrics is not None:
            self.metrics.observe_turn(surface, status, seconds)

    def _turn(self, text: str, *, surface: str, user: str, team: str, channel: str, thread: str,
              session: str | None, event_id: str | None, default_provider: str | None) -> dict[str, Any]:
        key = session_key(surface, team, channel, session or thread, user)
        state = self.sessions.load(key)
        reply, new_state = self.core_for(default_provider or self.default_provider).turn(text, state)
        self.sessions.save(key, new_state)
        sid = session or session_id(key)
        out = {"advice_id": None, "session": sid, **reply.model_dump()}
        entry = self.audit.append({
            "surface": surface, "team": team or None, "channel": channel or None, "user": user or None,
            "session": sid, "question": text, "status": reply.status, "intent": reply.intent, "slots": reply.slots,
            "recommendations": reply.recommendations, "rule_trace": reply.rule_trace,
            "kb_version": reply.kb_version, "reply": out, "event_id": event_id,
        })
        out["advice_id"] = entry.id
        out["duplicate"] = entry.duplicate
        return out

    def replay(self, advice_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """Ask a recorded question again (with the slots it had) against today's knowledge and rules."""
        old = self.audit.get(advice_id)
        if old is None:
            from bot.records.errors import NotFound
            raise NotFound(f"no audit record '{advice_id}'", fix="run `gpu-advisor audit list` to see the ids")
        prior = (old.get("reply") or {}).get("slots") or old.get("slots") or {}
        state = {"intent": old.get("intent"), "slots": {k: v for k, v in prior.items() if k != "params_b"},
                 "follow_ups": 9, "answered": True, "lang": (old.get("reply") or {}).get("lang")}
        reply, _ = self.core.turn(old["question"], state)
        return old, {"advice_id": None, "session": old.get("session"), **reply.model_dump()}
