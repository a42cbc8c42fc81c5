"""Retention per workspace: `audit prune --team T` removes one Slack team's old records from the one shared chain
(mixed into AuditLog, so PgAuditLog has it too, with its chain-head lock)."""
from __future__ import annotations

import datetime as dt
import os
from typing import Any

from bot.store.chain import (AuditError, CONTENT_FIELDS, PruneResult, SYSTEM_SURFACE, TEAM_PRUNE_STATUS, day_start,
                             format_id)
from bot.store.retention import forget_team

__all__ = ["TeamPrune"]


class TeamPrune:
    """`audit prune --team T`: one workspace's records older than its retention, out of the one shared chain.

    Why not a prefix: the chain interleaves every workspace, so one team's old rows sit between other teams' rows
    that must stay. The prune first appends a checkpoint row (surface `system`, status `team_pruned`, team T) that
    lists each run of consecutive rows it removes as (first seq, last seq, prev_hash of the first, hash of the
    last), then deletes them, in one transaction after a clean verify. `verify` steps over a listed run only where
    it fits the chain exactly (it hangs from the previous row's hash and the next row hangs from its last hash), so
    the rest still verifies, and a row deleted outside such a run is still reported. The checkpoint is chained and
    hashed like any row: altering its list breaks the chain there.
    """

    def prunable_team(self, team: str, before: dt.date) -> int:
        with self._read() as conn:
            return conn.execute("SELECT count(*) FROM advice WHERE team = ? AND ts < ? AND surface != ?",
                                (team, day_start(before), SYSTEM_SURFACE)).fetchone()[0]

    def prune_team(self, team: str, before: dt.date) -> PruneResult:
        """Delete `team`'s records dated before `before` (never a checkpoint), leaving the chain verifiable."""
        if not team:
            raise AuditError("a per-team prune needs a team id", fix="pass --team T (a Slack team id)")
        if isinstance(before, dt.datetime):
            before = before.date()
        cutoff = day_start(before)
        with self._write() as conn:
            self._refuse_broken_chain(conn)
            runs, doomed = _runs(conn.execute("SELECT seq, team, ts, surface, prev_hash, hash FROM advice "
                                              "ORDER BY seq").fetchall(), team, cutoff)
            forgotten = forget_team(conn, team, cutoff)       # the team's inbox jobs, sessions, votes: same cutoff
            if not doomed:
                return PruneResult(0, before, forgotten=forgotten)
            first, last = format_id(doomed[0]), format_id(doomed[-1])
            text = (f"Pruned {len(doomed)} record(s) of team {team} dated before {before.isoformat()} "
                    f"({first}..{last}, {len(runs)} run(s)); verify steps over the runs listed here.")
            content = {n: None for n in CONTENT_FIELDS}
            content.update(surface=SYSTEM_SURFACE, status=TEAM_PRUNE_STATUS, team=team, reply={
                "status": TEAM_PRUNE_STATUS, "text": text,
                "team_prune": {"team": team, "before": before.isoformat(), "pruned": len(doomed), "gaps": runs}})
            entry = self._append_locked(conn, content)        # chained to the head before anything is deleted
            token = os.urandom(8).hex()
            conn.execute("INSERT INTO audit_prune_lock (token) VALUES (?)", (token,))
            conn.execute("DELETE FROM advice WHERE team = ? AND ts < ? AND surface != ?",
                         (team, cutoff, SYSTEM_SURFACE))
            conn.execute("DELETE FROM audit_prune_lock WHERE token = ?", (token,))
        return PruneResult(len(doomed), before, first, last, entry.id, forgotten)


def _runs(rows: list[tuple], team: str, cutoff: str) -> tuple[list[list[Any]], list[int]]:
    """The runs of consecutive rows (in chain order) that a per-team prune removes, and their seqs."""
    runs: list[list[Any]] = []
    doomed: list[int] = []
    current: list[Any] | None = None
    for seq, row_team, ts, surface, prev_hash, digest in rows:
        if row_team == team and ts < cutoff and surface != SYSTEM_SURFACE:
            doomed.append(int(seq))
            if current is None:
                current = [int(seq), int(seq), prev_hash, digest]
                runs.append(current)
            else:
                current[1], current[3] = int(seq), digest
        else:
            current = None
    return runs, doomed
