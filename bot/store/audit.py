"""The audit log: one append-only, hash-chained record per reply the bot gives, on every surface.

Why: teams must be able to answer later "what did the bot tell whom, why, and on which knowledge?" ("why did
we rent 8 x A100 in March?"). Each row of table `advice` in the SQLite file `ADVISOR_DB` holds:

- who and where: `surface` (dm, mention, slash, button, cli; `system` for prune checkpoints), and the opaque
  Slack ids `team`, `channel`, `user` (for the CLI: whatever the CLI passes, normally the local account), the
  conversation's `session` id and the Slack `event_id` (so a retried Slack event is recorded once);
- what was asked and answered: `question` (the text as typed), `status`, `intent`, `slots`,
  `recommendations`, `rule_trace`, the whole `reply` object, and `kb_version` (the knowledge base's content hash);
- the chain: `prev_hash` and `hash` = sha256 of the canonical JSON of the content fields plus `prev_hash`.

Privacy, by construction: only the fields above are accepted (an unknown key is an error, not silently
kept); no Slack tokens, user names, display names or e-mail addresses are stored, Slack users appear only as
their opaque ids; strings that look like API tokens (`xoxb-...`, `xapp-...`, `sk-...`) are replaced by
"[redacted token]" before anything is written. Nothing is deleted automatically: `prune(before)` is the one
retention tool, and it leaves a checkpoint row so that the remaining chain still verifies.

Concurrency: WAL mode, a busy timeout, and every write inside `BEGIN IMMEDIATE`, so that reading the last hash
and inserting the next row are one atomic step across threads and processes. Triggers refuse UPDATE and DELETE
on `advice` (only `prune` may delete); a determined person can drop them, which is what `verify` is for.

Pure: sqlite-utils and the standard library only (no click, no Slack).
"""
from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import sqlite3
from typing import Any, Callable, TextIO

from bot.store.chain import (  # noqa: F401  (re-exported: the public names of the audit log live here)
    CHECKPOINT_STATUS, COLUMNS, CONTENT_FIELDS, JSON_FIELDS, RECORD_KEYS, REDACTED, SURFACES, SYSTEM_SURFACE,
    TEAM_PRUNE_STATUS, TEXT_FIELDS, ZERO_HASH, team_gaps, AuditEntry, AuditError, PruneResult, VerifyResult, canonical_json, day_start, decode,
    encode_json, entry_of, format_id, iso_utc, normalise, parse_id, record_hash, select_columns, to_json_value,
    utc_now, verify_rows,
)
from bot.store.db import DEFAULT_TIMEOUT_S, LockedDatabase
from bot.store.export import read_export, write_export
from bot.store.queries import AuditQueries
from bot.store.replay import Change, diff_records
from bot.store.retention import forget_before
from bot.store.team_prune import TeamPrune
from bot.store.migrations import migrate

__all__ = [
    "AuditLog", "AuditEntry", "AuditError", "VerifyResult", "PruneResult", "Change", "diff_records",
    "read_export", "verify_rows", "iso_utc", "canonical_json", "record_hash", "format_id", "parse_id", "utc_now",
    "ZERO_HASH", "SURFACES", "COLUMNS", "CONTENT_FIELDS", "JSON_FIELDS",
]


class AuditLog(TeamPrune, AuditQueries, LockedDatabase):
    """The `advice` table of one SQLite file. One instance may be shared by threads; many may exist."""

    def __init__(self, path: str | os.PathLike, *, clock: Callable[[], dt.datetime] = utc_now,
                 timeout: float = DEFAULT_TIMEOUT_S):
        self.path = pathlib.Path(path)
        self._clock = clock
        self._open(self.path, timeout)
        migrate(self)

    # -- plumbing -----------------------------------------------------------------------------------------

    @staticmethod
    def _high_water(conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'advice'").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    # -- writing ------------------------------------------------------------------------------------------

    def append(self, record: dict[str, Any]) -> AuditEntry:
        """Write one reply's record; with an event_id seen before, return that entry (duplicate=True)."""
        content = normalise(record)
        with self._write() as conn:
            if content["event_id"] is not None:
                existing = conn.execute(
                    f"SELECT {select_columns()} FROM advice WHERE event_id = ?", (content["event_id"],)).fetchone()
                if existing is not None:
                    return entry_of(dict(zip(COLUMNS, existing)), duplicate=True)
            return self._append_locked(conn, content)

    def _append_locked(self, conn: sqlite3.Connection, content: dict[str, Any],
                       head_if_empty: str = ZERO_HASH) -> AuditEntry:
        last = conn.execute("SELECT seq, hash FROM advice ORDER BY seq DESC LIMIT 1").fetchone()
        seq = max(last[0] if last else 0, self._high_water(conn)) + 1
        prev_hash = last[1] if last else head_if_empty
        return entry_of(self._insert(conn, seq, prev_hash, content))

    def _insert(self, conn, seq: int, prev_hash: str, content: dict[str, Any]) -> dict[str, Any]:
        """Timestamp, hash onto prev_hash and insert row `seq` (both backends: the caller holds the chain lock)."""
        content = dict(content, ts=iso_utc(self._clock()))
        row = {"seq": seq, "id": format_id(seq), **{n: content.get(n) for n in CONTENT_FIELDS},
               "prev_hash": prev_hash, "hash": record_hash(content, prev_hash)}
        stored = {n: (encode_json(v) if n in JSON_FIELDS else v) for n, v in row.items()}
        conn.execute(f"INSERT INTO advice ({select_columns()}) VALUES ({', '.join('?' * len(COLUMNS))})",
                     tuple(stored[n] for n in COLUMNS))
        return row

    def claim_event(self, event_id: str) -> bool:
        """Idempotency guard for the Slack edge: True for the first claimant of `event_id` only."""
        if not event_id:
            raise AuditError("claim_event needs a non-empty Slack event id")
        with self._write() as conn:
            cursor = conn.execute("INSERT OR IGNORE INTO slack_events (event_id, ts) VALUES (?, ?)",
                                  (str(event_id), iso_utc(self._clock())))
            return cursor.rowcount == 1

    # -- verification -------------------------------------------------------------------------------------

    def verify(self) -> VerifyResult:
        """SQLite's integrity check first (a damaged page can hide rows), then recompute the chain in one
        snapshot; name the first row edited, deleted around or reordered."""
        damage = self.integrity()
        if damage:
            return VerifyResult(False, 0, None, "the database file is damaged (SQLite integrity check: "
                                f"{'; '.join(damage)[:300]}); restore the latest `gpu-advisor audit backup` copy")
        with self._read() as conn:
            return self._verify_locked(conn)

    def _verify_locked(self, conn: sqlite3.Connection) -> VerifyResult:
        checkpoint = next(self._rows(
            conn, f"SELECT {select_columns()} FROM advice WHERE surface = ? AND status = ? "
                  "ORDER BY seq DESC LIMIT 1", (SYSTEM_SURFACE, CHECKPOINT_STATUS)), None)
        gaps = team_gaps(r[0] for r in conn.execute("SELECT reply FROM advice WHERE surface = ? AND status = ?",
                                                    (SYSTEM_SURFACE, TEAM_PRUNE_STATUS)).fetchall())
        rows = self._rows(conn, f"SELECT {select_columns()} FROM advice ORDER BY seq")
        return verify_rows(rows, checkpoint, self._high_water(conn), gaps)

    # -- export / import ----------------------------------------------------------------------------------

    def export(self, fmt: str, out: TextIO) -> int:
        """Write every row (chain order, all columns) as jsonl or csv; returns the number of rows."""
        return write_export(self.iter_all(), fmt, out)

    def load_export(self, path: str | os.PathLike) -> int:
        """Restore an export file into this (empty) log, row for row: seq, ids and hashes as they were.

        The rows are stored as they are in the file; run verify() afterwards to learn whether the file's chain
        is intact. Returns the number of rows loaded.
        """
        rows = read_export(path)
        with self._write() as conn:
            if conn.execute("SELECT count(*) FROM advice").fetchone()[0] or self._high_water(conn):
                raise AuditError(f"{self.path} already holds audit records",
                                 fix="load an export into a fresh database file (set ADVISOR_DB to a new path)")
            for row in rows:
                stored = {n: (encode_json(row.get(n)) if n in JSON_FIELDS else row.get(n)) for n in COLUMNS}
                conn.execute(f"INSERT INTO advice ({select_columns()}) VALUES ({', '.join('?' * len(COLUMNS))})",
                             tuple(stored[n] for n in COLUMNS))
        return len(rows)

    # -- retention ----------------------------------------------------------------------------------------

    def prunable(self, before: dt.date) -> int:
        """How many rows prune(before) would delete (the oldest rows up to the first one on/after `before`)."""
        with self._read() as conn:
            return self._prune_bounds(conn, before)[0]

    @staticmethod
    def _prune_bounds(conn: sqlite3.Connection, before: dt.date) -> tuple[int, int | None, int | None]:
        cutoff = day_start(before)
        first_kept = conn.execute("SELECT min(seq) FROM advice WHERE ts >= ?", (cutoff,)).fetchone()[0]
        if first_kept is None:
            lo, hi, n = conn.execute("SELECT min(seq), max(seq), count(*) FROM advice").fetchone()
        else:
            lo, hi, n = conn.execute("SELECT min(seq), max(seq), count(*) FROM advice WHERE seq < ?",
                                     (first_kept,)).fetchone()
        return n, lo, hi

    def _refuse_broken_chain(self, conn) -> None:
        """Pruning (whole log or one team) verifies the chain first: a broken chain is not pruned, that would
        destroy the evidence."""
        result = self._verify_locked(conn)
        if not result.ok:
            raise AuditError(f"the audit chain is broken at {result.first_bad} ({result.problem}); "
                             "pruning now would destroy the evidence",
                             fix="run `gpu-advisor audit verify`, export the log and investigate first")

    def prune(self, before: dt.date) -> PruneResult:
        """Delete the oldest rows dated before `before` and append a checkpoint row that anchors the rest.

        Only a prefix of the chain is removed (up to the first row dated on/after `before`), so what remains is
        one unbroken chain hanging from the last pruned row's hash, which the checkpoint records. The chain is
        verified first: a broken chain is not pruned (that would destroy the evidence).
        """
        if isinstance(before, dt.datetime):
            before = before.date()
        with self._write() as conn:
            self._refuse_broken_chain(conn)
            count, lo, hi = self._prune_bounds(conn, before)
            forgotten = forget_before(conn, day_start(before))   # the inbox, sessions, event ids: same cutoff
            if not count:
                return PruneResult(0, before, forgotten=forgotten)
            last_hash = conn.execute("SELECT hash FROM advice WHERE seq = ?", (hi,)).fetchone()[0]
            previous = next(self._rows(
                conn, "SELECT reply FROM advice WHERE surface = ? AND status = ? ORDER BY seq DESC LIMIT 1",
                (SYSTEM_SURFACE, CHECKPOINT_STATUS)), None)
            earlier = 0
            if previous:
                try:
                    earlier = int(json.loads(previous["reply"])["checkpoint"].get("pruned_total", 0))
                except (TypeError, ValueError, KeyError, AttributeError):
                    earlier = 0
            token = os.urandom(8).hex()
            conn.execute("INSERT INTO audit_prune_lock (token) VALUES (?)", (token,))
            conn.execute("DELETE FROM advice WHERE seq <= ?", (hi,))
            conn.execute("DELETE FROM audit_prune_lock WHERE token = ?", (token,))
            point = {"pruned": count, "pruned_total": earlier + count, "before": before.isoformat(),
                     "first_pruned": format_id(lo), "last_pruned": format_id(hi), "through_seq": hi,
                     "anchor_hash": last_hash}
            text = (f"Pruned {count} record(s) dated before {before.isoformat()} "
                    f"({format_id(lo)}..{format_id(hi)}); the chain continues from {format_id(hi)}'s hash.")
            content = {n: None for n in CONTENT_FIELDS}
            content.update(surface=SYSTEM_SURFACE, status=CHECKPOINT_STATUS,
                           reply={"status": CHECKPOINT_STATUS, "text": text, "checkpoint": point})
            entry = self._append_locked(conn, content, head_if_empty=last_hash)
        return PruneResult(count, before, format_id(lo), format_id(hi), entry.id, forgotten)


# replay (wired elsewhere) compares two replies with this; reachable from the log object too
AuditLog.diff_records = staticmethod(diff_records)  # type: ignore[attr-defined]
