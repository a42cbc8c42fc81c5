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

import csv
import dataclasses
import datetime as dt
import decimal
import hashlib
import io
import json
import math
import os
import pathlib
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, TextIO

from bot.store.db import DEFAULT_TIMEOUT_S, LockedDatabase
from bot.records.errors import AdvisorError

__all__ = [
    "AuditLog", "AuditEntry", "AuditError", "VerifyResult", "PruneResult", "Change", "diff_records",
    "read_export", "verify_rows", "iso_utc", "canonical_json", "record_hash", "format_id", "parse_id", "utc_now",
    "ZERO_HASH", "SURFACES", "COLUMNS", "CONTENT_FIELDS", "JSON_FIELDS",
]

ZERO_HASH = "0" * 64
SURFACES = ("dm", "mention", "slash", "button", "cli")
SYSTEM_SURFACE = "system"
CHECKPOINT_STATUS = "checkpoint"

# Hashed, in this order of meaning (the hash uses sorted keys, so order is for people only).
TEXT_FIELDS = ("surface", "team", "channel", "user", "session", "question", "status", "intent", "kb_version",
               "event_id")
JSON_FIELDS = ("slots", "recommendations", "rule_trace", "reply")
CONTENT_FIELDS = ("ts", "surface", "team", "channel", "user", "session", "question", "status", "intent",
                  "slots", "recommendations", "rule_trace", "kb_version", "reply", "event_id")
COLUMNS = ("seq", "id") + CONTENT_FIELDS + ("prev_hash", "hash")
RECORD_KEYS = frozenset(CONTENT_FIELDS) - {"ts"}     # what append() accepts; ts is the log's own clock


_SCHEMA = """
CREATE TABLE IF NOT EXISTS advice (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    ts TEXT NOT NULL,
    surface TEXT NOT NULL,
    team TEXT,
    channel TEXT,
    "user" TEXT,
    session TEXT,
    question TEXT,
    status TEXT NOT NULL,
    intent TEXT,
    slots TEXT,
    recommendations TEXT,
    rule_trace TEXT,
    kb_version TEXT,
    reply TEXT,
    event_id TEXT UNIQUE,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS advice_ts ON advice(ts);
CREATE INDEX IF NOT EXISTS advice_user ON advice("user", ts);
CREATE INDEX IF NOT EXISTS advice_session ON advice(session, ts);
CREATE TABLE IF NOT EXISTS slack_events (
    event_id TEXT PRIMARY KEY,
    ts TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_prune_lock (
    token TEXT PRIMARY KEY
);
CREATE TRIGGER IF NOT EXISTS advice_no_update BEFORE UPDATE ON advice
BEGIN
    SELECT RAISE(ABORT, 'advice rows are append-only');
END;
CREATE TRIGGER IF NOT EXISTS advice_no_delete BEFORE DELETE ON advice
WHEN NOT EXISTS (SELECT 1 FROM audit_prune_lock)
BEGIN
    SELECT RAISE(ABORT, 'advice rows are append-only: use `gpu-advisor audit prune --before DATE`');
END;
CREATE VIEW IF NOT EXISTS advice_readable AS
SELECT
    seq,
    id,
    ts,
    surface,
    "user",
    channel,
    session,
    status,
    intent,
    question,
    json_extract(recommendations, '$[0].provider') AS top_provider,
    json_extract(recommendations, '$[0].flavor') AS top_flavor,
    json_extract(recommendations, '$[0].gpu') AS top_gpu,
    json_extract(recommendations, '$[0].gpu_count') AS top_gpu_count,
    json_extract(recommendations, '$[0].instances') AS top_instances,
    json_extract(recommendations, '$[0].price_per_hour') AS top_price_per_hour,
    json_extract(recommendations, '$[0].currency') AS top_currency,
    json_extract(reply, '$.memory.per_gpu_gib') AS per_gpu_gib,
    json_array_length(recommendations) AS n_recommendations,
    kb_version,
    hash
FROM advice;
"""


class AuditError(AdvisorError):
    """The audit log cannot do what was asked (bad record, broken chain before a prune, non-empty import)."""


# ----------------------------------------------------------------------------------------------------------
# small pure helpers


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def iso_utc(moment: dt.datetime) -> str:
    """ISO-8601 UTC, seconds: 2026-03-14T09:26:53Z (sorts as text)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def _day_start(day: dt.date | dt.datetime) -> str:
    if isinstance(day, dt.datetime):
        return iso_utc(day)
    return f"{day.isoformat()}T00:00:00Z"


def format_id(seq: int) -> str:
    """The human-readable id of row `seq`: A000042."""
    return f"A{seq:06d}"


_ID_RE = re.compile(r"^\s*[Aa]?0*(\d+)\s*$")


def parse_id(text: str | int) -> int:
    """'A000042', 'a42' or '42' -> 42. ValueError for anything else."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 1:
            raise ValueError(f"{text} is not an audit id")
        return text
    match = _ID_RE.match(str(text))
    if not match or int(match.group(1)) < 1:
        raise ValueError(f"{text!r} is not an audit id (they look like A000042)")
    return int(match.group(1))


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def record_hash(content: dict[str, Any], prev_hash: str) -> str:
    """sha256 over the canonical JSON of the content fields plus prev_hash (missing fields count as null)."""
    body = {name: content.get(name) for name in CONTENT_FIELDS}
    body["prev_hash"] = prev_hash
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


_TOKEN_RE = re.compile(r"\b(?:xox[abposre]-[A-Za-z0-9-]{8,}|xapp-\d-[A-Za-z0-9-]{8,}|sk-[A-Za-z0-9_-]{20,})")
REDACTED = "[redacted token]"


def _redact(text: str) -> str:
    return _TOKEN_RE.sub(REDACTED, text)


def _json_default(value: Any) -> Any:
    if hasattr(value, "model_dump"):                       # pydantic v2 models
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, (pathlib.PurePath,)):
        return str(value)
    raise TypeError(f"cannot store a {type(value).__name__} in the audit log as JSON")


def _clean(value: Any) -> Any:
    """JSON-native copy: non-finite floats become null, strings lose anything that looks like a token."""
    if isinstance(value, str):
        return _redact(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def to_json_value(value: Any) -> Any:
    """Any reply-ish object (dict, pydantic model, dataclass...) -> plain JSON data, as it will be hashed."""
    if value is None:
        return None
    return _clean(json.loads(json.dumps(value, default=_json_default)))


def _normalise(record: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise AuditError(f"an audit record must be a dict, not {type(record).__name__}")
    unknown = sorted(set(record) - RECORD_KEYS)
    if "ts" in unknown:
        raise AuditError("an audit record does not take `ts`",
                         fix="leave it out: the audit log stamps each record with its own clock when it is written")
    if unknown:
        raise AuditError(f"unknown audit field(s): {', '.join(unknown)}",
                         fix="the audit log keeps only " + ", ".join(sorted(RECORD_KEYS))
                         + "; put anything else into `reply`, or leave it out")
    out: dict[str, Any] = {}
    for name in TEXT_FIELDS:
        value = record.get(name)
        if value is not None and not isinstance(value, str):
            value = str(value)
        value = _redact(value) if value else None         # "" and None both mean "not given"
        out[name] = value
    for name in JSON_FIELDS:
        out[name] = to_json_value(record.get(name))
    if out["surface"] not in SURFACES:
        raise AuditError(f"unknown surface {out['surface']!r}", fix="use one of " + ", ".join(SURFACES))
    if not out["status"]:
        raise AuditError("an audit record needs a status", fix="pass the reply's status (answer, follow_up...)")
    return out


def _decode(row: dict[str, Any], strict: bool = False) -> dict[str, Any]:
    """A database row with JSON columns decoded (undecodable text is kept as text unless strict)."""
    out = dict(row)
    for name in JSON_FIELDS:
        raw = out.get(name)
        if not isinstance(raw, (str, bytes)):
            continue
        try:
            out[name] = json.loads(raw)
        except (TypeError, ValueError):
            if strict:
                raise
    return out


def _encode_json(value: Any) -> str | None:
    """Stored text of a JSON column: compact, in the producer's key order (the hash sorts keys itself)."""
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# ----------------------------------------------------------------------------------------------------------
# connections


@dataclass(frozen=True)
class AuditEntry:
    """What append() wrote (or found, when `duplicate` is True: the event was recorded before)."""
    id: str
    seq: int
    ts: str
    hash: str
    prev_hash: str
    event_id: str | None = None
    duplicate: bool = False
    row: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class VerifyResult:
    ok: bool
    checked: int
    first_bad: str | None = None
    problem: str | None = None
    head: str | None = None             # hash of the last row: keep a copy elsewhere to detect a rewrite

    def __str__(self) -> str:
        if self.ok:
            return f"ok: {self.checked} record(s), chain intact" + (f", head {self.head[:16]}" if self.head else "")
        return f"FAILED at {self.first_bad}: {self.problem} ({self.checked} record(s) before it are intact)"


@dataclass(frozen=True)
class PruneResult:
    pruned: int
    before: dt.date
    first: str | None = None            # first pruned id
    last: str | None = None             # last pruned id (its hash is the new anchor)
    checkpoint: str | None = None       # id of the checkpoint row written, None when nothing was pruned


# ----------------------------------------------------------------------------------------------------------
# verification (pure: works on database rows and on exported rows alike)


def _checkpoint_anchor(row: dict[str, Any] | None) -> tuple[int, str, str | None]:
    """(first expected seq, expected prev_hash, problem) for the chain after `row` (latest checkpoint)."""
    if row is None:
        return 1, ZERO_HASH, None
    reply = row.get("reply")
    if isinstance(reply, str):
        try:
            reply = json.loads(reply)
        except ValueError:
            reply = None
    point = reply.get("checkpoint") if isinstance(reply, dict) else None
    try:
        through = int(point["through_seq"])
        anchor = str(point["anchor_hash"])
    except (TypeError, KeyError, ValueError):
        return 1, ZERO_HASH, "this checkpoint row has no readable checkpoint content (through_seq, anchor_hash)"
    return through + 1, anchor, None


def verify_rows(rows: Iterable[dict[str, Any]], checkpoint: dict[str, Any] | None = None,
                high_water: int | None = None) -> VerifyResult:
    """Walk rows (as stored, JSON columns as text) in seq order; name the first row edited, deleted or moved.

    `checkpoint` is the latest prune checkpoint row (it says where the remaining chain starts and which hash it
    hangs from); `high_water` the largest seq ever issued (sqlite_sequence), to see rows deleted at the end.
    Rows whose JSON columns are already decoded (read_export) are accepted too.
    """
    expected_seq, expected_prev, problem = _checkpoint_anchor(checkpoint)
    if problem:
        return VerifyResult(False, 0, checkpoint.get("id"), problem)
    anchor_name = "the start of the log" if checkpoint is None else f"the prune anchor of checkpoint {checkpoint['id']}"
    iterator = iter(rows)
    checked = 0
    previous_id: str | None = None
    head: str | None = None
    for raw in iterator:
        try:
            row = _decode(raw, strict=True)
        except ValueError:
            bad = [n for n in JSON_FIELDS if raw.get(n) is not None and not _is_json(raw.get(n))]
            return VerifyResult(False, checked, raw.get("id"),
                                f"column {', '.join(bad)} is not valid JSON: the row was edited after it was written")
        seq, rid = row.get("seq"), row.get("id")
        if not isinstance(seq, int):
            return VerifyResult(False, checked, rid, f"seq {seq!r} is not a number")
        if rid != format_id(seq):
            return VerifyResult(False, checked, rid,
                                f"{rid} is stored at position {seq} (where {format_id(seq)} belongs): rows were "
                                "reordered or renumbered")
        if seq < expected_seq:
            return VerifyResult(False, checked, rid,
                                f"{rid} comes before the first row the chain allows ({format_id(expected_seq)}): "
                                "rows were reordered or restored after a prune")
        if seq > expected_seq:
            missing = format_id(expected_seq) + ("" if seq == expected_seq + 1 else f"..{format_id(seq - 1)}")
            after = f"after {previous_id}" if previous_id else f"at {anchor_name}"
            return VerifyResult(False, checked, rid, f"{missing} missing {after}: rows were deleted")
        if row.get("hash") != record_hash(row, row.get("prev_hash") or ""):
            return VerifyResult(False, checked, rid,
                                "its content does not match its hash: the row was edited after it was written")
        if row.get("prev_hash") != expected_prev:
            target = row.get("prev_hash")
            follows = None
            for later in iterator:                       # only on failure: is it chained to a later row?
                if later.get("hash") == target:
                    follows = later.get("id")
                    break
            if follows:
                problem = (f"out of order: it chains to {follows}, which is stored after it: rows were reordered")
            elif previous_id is None:
                problem = f"its prev_hash does not match {anchor_name}: rows before it were deleted or replaced"
            else:
                problem = (f"its prev_hash does not match the hash of {previous_id}: {previous_id} was "
                           "re-hashed after an edit, or rows were removed or reordered")
            return VerifyResult(False, checked, rid, problem)
        checked += 1
        previous_id, expected_prev, head = rid, row["hash"], row["hash"]
        expected_seq = seq + 1
    if high_water is not None and high_water >= expected_seq:
        missing = format_id(expected_seq) + ("" if high_water == expected_seq else f"..{format_id(high_water)}")
        after = f"after {previous_id}" if previous_id else f"at {anchor_name}"
        return VerifyResult(False, checked, format_id(expected_seq),
                            f"{missing} missing {after}: the last rows were deleted "
                            f"(the log had reached {format_id(high_water)})")
    return VerifyResult(True, checked, head=head)


def _is_json(text: Any) -> bool:
    try:
        json.loads(text)
        return True
    except (TypeError, ValueError):
        return False


def _latest_checkpoint(rows: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    latest = None
    for row in rows:
        if row.get("surface") == SYSTEM_SURFACE and row.get("status") == CHECKPOINT_STATUS:
            latest = row
    return latest


# ----------------------------------------------------------------------------------------------------------
# export files


def _csv_cell(name: str, value: Any) -> Any:
    if name in JSON_FIELDS:
        return "" if value is None else _encode_json(value)
    return "" if value is None else value


def read_export(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Rows of an `audit export` file (jsonl or csv, told apart by extension or first character)."""
    path = pathlib.Path(path)
    text = path.read_text(encoding="utf-8")
    fmt = "csv" if path.suffix.lower() == ".csv" else "jsonl" if path.suffix.lower() in (".jsonl", ".ndjson", ".json") \
        else ("jsonl" if text.lstrip().startswith("{") else "csv")
    rows: list[dict[str, Any]] = []
    if fmt == "jsonl":
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise AuditError(f"{path}:{number}: not a JSON object ({exc.msg})",
                                 fix="pass a file written by `gpu-advisor audit export --format jsonl`") from exc
            rows.append({name: obj.get(name) for name in COLUMNS})
        return rows
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise AuditError(f"{path}: CSV header lacks {', '.join(missing)}",
                         fix="pass a file written by `gpu-advisor audit export --format csv`")
    for row in reader:
        out: dict[str, Any] = {}
        for name in COLUMNS:
            cell = row.get(name)
            if name == "seq":
                out[name] = int(cell)
            elif name in JSON_FIELDS:
                out[name] = json.loads(cell) if cell else None
            else:
                out[name] = cell if cell != "" else None
        rows.append(out)
    return rows


# ----------------------------------------------------------------------------------------------------------
# the log


class AuditLog(LockedDatabase):
    """The `advice` table of one SQLite file. One instance may be shared by threads; many may exist."""

    def __init__(self, path: str | os.PathLike, *, clock: Callable[[], dt.datetime] = utc_now,
                 timeout: float = DEFAULT_TIMEOUT_S):
        self.path = pathlib.Path(path)
        self._clock = clock
        self._open(self.path, timeout)
        with self._write():
            for statement in _statements(_SCHEMA):
                self.db.conn.execute(statement)

    # -- plumbing -----------------------------------------------------------------------------------------

    @staticmethod
    def _rows(conn: sqlite3.Connection, sql: str, params: Iterable[Any] = ()) -> Iterator[dict[str, Any]]:
        cursor = conn.execute(sql, tuple(params))
        names = [d[0] for d in cursor.description]
        for values in cursor:
            yield dict(zip(names, values))

    @staticmethod
    def _high_water(conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'advice'").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    # -- writing ------------------------------------------------------------------------------------------

    def append(self, record: dict[str, Any]) -> AuditEntry:
        """Write one reply's record; with an event_id seen before, return that entry (duplicate=True)."""
        content = _normalise(record)
        with self._write() as conn:
            if content["event_id"] is not None:
                existing = conn.execute(
                    f"SELECT {_select_columns()} FROM advice WHERE event_id = ?", (content["event_id"],)).fetchone()
                if existing is not None:
                    return _entry(dict(zip(COLUMNS, existing)), duplicate=True)
            return self._append_locked(conn, content)

    def _append_locked(self, conn: sqlite3.Connection, content: dict[str, Any],
                       head_if_empty: str = ZERO_HASH) -> AuditEntry:
        last = conn.execute("SELECT seq, hash FROM advice ORDER BY seq DESC LIMIT 1").fetchone()
        seq = max(last[0] if last else 0, self._high_water(conn)) + 1
        prev_hash = last[1] if last else head_if_empty
        content = dict(content, ts=iso_utc(self._clock()))
        digest = record_hash(content, prev_hash)
        row = {"seq": seq, "id": format_id(seq), **{n: content.get(n) for n in CONTENT_FIELDS},
               "prev_hash": prev_hash, "hash": digest}
        stored = {n: (_encode_json(v) if n in JSON_FIELDS else v) for n, v in row.items()}
        conn.execute(f"INSERT INTO advice ({_select_columns()}) VALUES ({', '.join('?' * len(COLUMNS))})",
                     tuple(stored[n] for n in COLUMNS))
        return _entry(row)

    def claim_event(self, event_id: str) -> bool:
        """Idempotency guard for the Slack edge: True for the first claimant of `event_id` only."""
        if not event_id:
            raise AuditError("claim_event needs a non-empty Slack event id")
        with self._write() as conn:
            cursor = conn.execute("INSERT OR IGNORE INTO slack_events (event_id, ts) VALUES (?, ?)",
                                  (str(event_id), iso_utc(self._clock())))
            return cursor.rowcount == 1

    # -- reading ------------------------------------------------------------------------------------------

    def get(self, id: str | int) -> dict[str, Any] | None:
        """The record with this id ('A000042', 'a42', 42), JSON columns decoded; None when there is none."""
        try:
            seq = parse_id(id)
        except ValueError:
            return None
        with self._read() as conn:
            row = next(self._rows(conn, f"SELECT {_select_columns()} FROM advice WHERE seq = ?", (seq,)), None)
        return _decode(row) if row else None

    def id_range(self) -> tuple[str, str] | None:
        """(first id, last id) present, for error messages; None when the log is empty."""
        with self._read() as conn:
            lo, hi = conn.execute("SELECT min(seq), max(seq) FROM advice").fetchone()
        return (format_id(lo), format_id(hi)) if lo is not None else None

    def list(self, limit: int | None = 20, user: str | None = None, since: dt.date | dt.datetime | None = None,
             session: str | None = None) -> list[dict[str, Any]]:
        """Newest first, JSON columns decoded. `since` is inclusive (a date means from its 00:00 UTC)."""
        where, params = [], []
        if user:
            where.append('"user" = ?')
            params.append(user)
        if session:
            where.append("session = ?")
            params.append(session)
        if since is not None:
            where.append("ts >= ?")
            params.append(_day_start(since))
        sql = f"SELECT {_select_columns()} FROM advice"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY seq DESC"
        if limit is not None:
            if limit < 1:
                raise AuditError(f"limit must be at least 1, not {limit}")
            sql += f" LIMIT {int(limit)}"
        with self._read() as conn:
            return [_decode(r) for r in self._rows(conn, sql, params)]

    def count(self) -> int:
        with self._read() as conn:
            return conn.execute("SELECT count(*) FROM advice").fetchone()[0]

    def iter_all(self, page: int = 500) -> Iterator[dict[str, Any]]:
        """Every row in chain order, decoded, fetched a page at a time (writers are not blocked meanwhile)."""
        after = 0
        while True:
            with self._read() as conn:
                batch = list(self._rows(conn, f"SELECT {_select_columns()} FROM advice WHERE seq > ? "
                                              "ORDER BY seq LIMIT ?", (after, page)))
            if not batch:
                return
            for row in batch:
                yield _decode(row)
            after = batch[-1]["seq"]

    # -- verification -------------------------------------------------------------------------------------

    def verify(self) -> VerifyResult:
        """Recompute the chain in one snapshot; name the first row edited, deleted around or reordered."""
        with self._read() as conn:
            return self._verify_locked(conn)

    def _verify_locked(self, conn: sqlite3.Connection) -> VerifyResult:
        checkpoint = next(self._rows(
            conn, f"SELECT {_select_columns()} FROM advice WHERE surface = ? AND status = ? "
                  "ORDER BY seq DESC LIMIT 1", (SYSTEM_SURFACE, CHECKPOINT_STATUS)), None)
        rows = self._rows(conn, f"SELECT {_select_columns()} FROM advice ORDER BY seq")
        return verify_rows(rows, checkpoint, self._high_water(conn))

    # -- export / import ----------------------------------------------------------------------------------

    def export(self, fmt: str, out: TextIO) -> int:
        """Write every row (chain order, all columns) as jsonl or csv; returns the number of rows."""
        if fmt not in ("jsonl", "csv"):
            raise AuditError(f"unknown export format {fmt!r}", fix="use jsonl or csv")
        count = 0
        writer = csv.DictWriter(out, fieldnames=list(COLUMNS), lineterminator="\n") if fmt == "csv" else None
        if writer:
            writer.writeheader()
        for row in self.iter_all():
            if writer:
                writer.writerow({n: _csv_cell(n, row.get(n)) for n in COLUMNS})
            else:
                out.write(json.dumps({n: row.get(n) for n in COLUMNS}, ensure_ascii=False) + "\n")
            count += 1
        return count

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
                stored = {n: (_encode_json(row.get(n)) if n in JSON_FIELDS else row.get(n)) for n in COLUMNS}
                conn.execute(f"INSERT INTO advice ({_select_columns()}) VALUES ({', '.join('?' * len(COLUMNS))})",
                             tuple(stored[n] for n in COLUMNS))
        return len(rows)

    # -- retention ----------------------------------------------------------------------------------------

    def prunable(self, before: dt.date) -> int:
        """How many rows prune(before) would delete (the oldest rows up to the first one on/after `before`)."""
        with self._read() as conn:
            return self._prune_bounds(conn, before)[0]

    @staticmethod
    def _prune_bounds(conn: sqlite3.Connection, before: dt.date) -> tuple[int, int | None, int | None]:
        cutoff = _day_start(before)
        first_kept = conn.execute("SELECT min(seq) FROM advice WHERE ts >= ?", (cutoff,)).fetchone()[0]
        if first_kept is None:
            lo, hi, n = conn.execute("SELECT min(seq), max(seq), count(*) FROM advice").fetchone()
        else:
            lo, hi, n = conn.execute("SELECT min(seq), max(seq), count(*) FROM advice WHERE seq < ?",
                                     (first_kept,)).fetchone()
        return n, lo, hi

    def prune(self, before: dt.date) -> PruneResult:
        """Delete the oldest rows dated before `before` and append a checkpoint row that anchors the rest.

        Only a prefix of the chain is removed (up to the first row dated on/after `before`), so what remains is
        one unbroken chain hanging from the last pruned row's hash, which the checkpoint records. The chain is
        verified first: a broken chain is not pruned (that would destroy the evidence).
        """
        if isinstance(before, dt.datetime):
            before = before.date()
        with self._write() as conn:
            result = self._verify_locked(conn)
            if not result.ok:
                raise AuditError(f"the audit chain is broken at {result.first_bad} ({result.problem}); "
                                 "pruning now would destroy the evidence",
                                 fix="run `gpu-advisor audit verify`, export the log and investigate first")
            count, lo, hi = self._prune_bounds(conn, before)
            if not count:
                return PruneResult(0, before)
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
            conn.execute("DELETE FROM slack_events WHERE ts < ?", (_day_start(before),))
            point = {"pruned": count, "pruned_total": earlier + count, "before": before.isoformat(),
                     "first_pruned": format_id(lo), "last_pruned": format_id(hi), "through_seq": hi,
                     "anchor_hash": last_hash}
            text = (f"Pruned {count} record(s) dated before {before.isoformat()} "
                    f"({format_id(lo)}..{format_id(hi)}); the chain continues from {format_id(hi)}'s hash.")
            content = {n: None for n in CONTENT_FIELDS}
            content.update(surface=SYSTEM_SURFACE, status=CHECKPOINT_STATUS,
                           reply={"status": CHECKPOINT_STATUS, "text": text, "checkpoint": point})
            entry = self._append_locked(conn, content, head_if_empty=last_hash)
        return PruneResult(count, before, format_id(lo), format_id(hi), entry.id)


def _statements(script: str) -> list[str]:
    """Split the schema script into statements (triggers contain ';' inside BEGIN...END)."""
    out, buf = [], []
    for line in script.strip().splitlines():
        buf.append(line)
        joined = "\n".join(buf).strip()
        if joined.endswith(";") and sqlite3.complete_statement(joined):
            out.append(joined)
            buf = []
    if "\n".join(buf).strip():
        out.append("\n".join(buf).strip())
    return out


def _select_columns() -> str:
    return ", ".join(f'"{c}"' for c in COLUMNS)


def _entry(row: dict[str, Any], duplicate: bool = False) -> AuditEntry:
    row = _decode(row)
    return AuditEntry(id=row["id"], seq=row["seq"], ts=row["ts"], hash=row["hash"], prev_hash=row["prev_hash"],
                      event_id=row.get("event_id"), duplicate=duplicate, row=row)


# ----------------------------------------------------------------------------------------------------------
# comparing two replies (used by `audit replay`)


@dataclass(frozen=True)
class Change:
    """One difference between two replies, in plain words (`text`)."""
    kind: str            # status | top_pick | price | fits | instances | added | removed | checklist | memory | kb
    subject: str         # what changed: "status", a flavor, a checklist item, "memory"
    old: Any
    new: Any
    text: str

    def __str__(self) -> str:
        return self.text


def _recs(reply: dict[str, Any]) -> list[dict[str, Any]]:
    recs = (reply or {}).get("recommendations") or []
    return [r for r in recs if isinstance(r, dict)]


def _rec_key(rec: dict[str, Any]) -> str:
    return f"{rec.get('provider') or '?'}/{rec.get('flavor') or '?'}"


def _rec_label(rec: dict[str, Any] | None) -> str:
    if not rec:
        return "nothing"
    n = rec.get("instances") or 1
    gpu = rec.get("gpu")
    count = rec.get("gpu_count")
    inside = f"{count} x {gpu}" if gpu and count else (gpu or "?")
    where = f", {rec['provider']}" if rec.get("provider") else ""
    return f"{n} x {rec.get('flavor') or '?'} ({inside}{where})"


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _fmt(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") if value is not None else "?"


def diff_records(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """What changed between two reply dicts (the one recorded, the one given today), in plain words.

    Compares: status, the top pick, each recommendation's price / fit / instance count, recommendations
    added or dropped, checklist statuses, the memory estimate per GPU and the knowledge-base version.
    An empty list means the advice is the same.
    """
    old, new = old or {}, new or {}
    changes: list[Change] = []

    def add(kind: str, subject: str, a: Any, b: Any, text: str) -> None:
        changes.append(Change(kind, subject, a, b, text))

    if old.get("status") != new.get("status"):
        add("status", "status", old.get("status"), new.get("status"),
            f"Status changed from {old.get('status')} to {new.get('status')}.")

    old_recs, new_recs = _recs(old), _recs(new)
    old_top, new_top = (old_recs[0] if old_recs else None), (new_recs[0] if new_recs else None)
    old_top_key = _rec_key(old_top) if old_top else None
    new_top_key = _rec_key(new_top) if new_top else None
    if old_top_key != new_top_key or (old_top and new_top and old_top.get("instances") != new_top.get("instances")):
        if old_top_key == new_top_key:
            pass                                               # same flavor, other count: reported below
        elif old_top is None:
            add("top_pick", "top pick", None, new_top_key, f"Top pick is now {_rec_label(new_top)}; there was none.")
        elif new_top is None:
            add("top_pick", "top pick", old_top_key, None, f"No recommendation any more; it was {_rec_label(old_top)}.")
        else:
            add("top_pick", "top pick", old_top_key, new_top_key,
                f"Top pick changed from {_rec_label(old_top)} to {_rec_label(new_top)}.")

    old_by = {_rec_key(r): r for r in old_recs}
    new_by = {_rec_key(r): r for r in new_recs}
    for key, before in old_by.items():
        after = new_by.get(key)
        flavor = before.get("flavor") or key
        if after is None:
            add("removed", key, _rec_label(before), None, f"{flavor} is no longer recommended.")
            continue
        p0, p1 = _num(before.get("price_per_hour")), _num(after.get("price_per_hour"))
        c0, c1 = before.get("currency"), after.get("currency")
        if (p0 is None) != (p1 is None) or (p0 is not None and p1 is not None and abs(p0 - p1) > 1e-9) or \
                (p0 is not None and c0 != c1):
            if p0 is None:
                text = f"{flavor}: now priced at {_fmt(p1)} {c1 or ''}/h (no price before)."
            elif p1 is None:
                text = f"{flavor}: no price any more (was {_fmt(p0)} {c0 or ''}/h)."
            elif c0 != c1:
                text = f"{flavor}: price {_fmt(p0)} {c0 or '?'}/h -> {_fmt(p1)} {c1 or '?'}/h (currency changed)."
            else:
                pct = f" ({(p1 - p0) / p0 * 100:+.0f} %)" if p0 else ""
                text = f"{flavor}: price {_fmt(p0)} -> {_fmt(p1)} {c1 or ''}/h{pct}."
            add("price", key, p0, p1, text.replace(" /h", "/h"))
        f0, f1 = before.get("fits"), after.get("fits")
        if f0 != f1 and f0 is not None and f1 is not None:
            add("fits", key, f0, f1, f"{flavor}: {'now fits' if f1 else 'no longer fits'} the job.")
        n0, n1 = before.get("instances"), after.get("instances")
        if n0 != n1 and n0 is not None and n1 is not None:
            add("instances", key, n0, n1, f"{flavor}: {n0} -> {n1} instance(s) needed.")
    for key, after in new_by.items():
        if key not in old_by:
            add("added", key, None, _rec_label(after), f"Newly recommended: {_rec_label(after)}.")

    old_check = {c.get("item"): c for c in (old.get("checklist") or []) if isinstance(c, dict)}
    new_check = {c.get("item"): c for c in (new.get("checklist") or []) if isinstance(c, dict)}
    for item in list(old_check) + [i for i in new_check if i not in old_check]:
        s0 = (old_check.get(item) or {}).get("status")
        s1 = (new_check.get(item) or {}).get("status")
        if s0 == s1:
            continue
        if s0 is None:
            text = f"Checklist {item}: new item, {s1}."
        elif s1 is None:
            text = f"Checklist {item}: no longer checked (was {s0})."
        else:
            text = f"Checklist {item}: {s0} -> {s1}."
        detail = (new_check.get(item) or {}).get("text")
        if detail and s1:
            text = f"{text[:-1]}: {detail}"
        add("checklist", str(item), s0, s1, text)

    m0 = _num(((old.get("memory") or {}) if isinstance(old.get("memory"), dict) else {}).get("per_gpu_gib"))
    m1 = _num(((new.get("memory") or {}) if isinstance(new.get("memory"), dict) else {}).get("per_gpu_gib"))
    if (m0 is None) != (m1 is None) or (m0 is not None and m1 is not None and abs(m0 - m1) >= 0.05):
        if m0 is None:
            text = f"Memory estimate is now {_fmt(m1)} GiB per GPU (none before)."
        elif m1 is None:
            text = f"No memory estimate any more (was {_fmt(m0)} GiB per GPU)."
        else:
            text = f"Memory per GPU: {_fmt(m0)} -> {_fmt(m1)} GiB."
        add("memory", "memory", m0, m1, text)

    k0, k1 = old.get("kb_version"), new.get("kb_version")
    if k0 and k1 and k0 != k1:
        add("kb", "kb_version", k0, k1, f"Knowledge base changed ({str(k0)[:12]} -> {str(k1)[:12]}).")
    return changes


# replay (wired elsewhere) compares two replies with this; reachable from the log object too
AuditLog.diff_records = staticmethod(diff_records)  # type: ignore[attr-defined]
