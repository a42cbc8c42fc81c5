"""The audit chain's rules, shared by every reader and writer of the log: the fields of a record, how a record
is normalised (redacted, JSON-native) before it is hashed, the hash itself, and `verify_rows`, which walks rows
(from the database or from an export file alike) and names the first one edited, deleted or moved.

Why a module of its own: the chain is the part whose meaning must never change; the database (audit.py), its
queries (queries.py) and the export files (export.py) all build on it. Pure: the standard library only.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import hashlib
import json
import math
import pathlib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from bot.records.errors import AdvisorError

ZERO_HASH = "0" * 64
SURFACES = ("dm", "mention", "slash", "button", "shortcut", "cli")
SYSTEM_SURFACE = "system"
CHECKPOINT_STATUS = "checkpoint"
TEAM_PRUNE_STATUS = "team_pruned"      # a per-team prune: its reply lists the runs of rows it removed (`gaps`)

# Hashed, in this order of meaning (the hash uses sorted keys, so order is for people only).
TEXT_FIELDS = ("surface", "team", "channel", "user", "session", "question", "status", "intent", "kb_version",
               "event_id")
JSON_FIELDS = ("slots", "recommendations", "rule_trace", "reply")
CONTENT_FIELDS = ("ts", "surface", "team", "channel", "user", "session", "question", "status", "intent",
                  "slots", "recommendations", "rule_trace", "kb_version", "reply", "event_id")
COLUMNS = ("seq", "id") + CONTENT_FIELDS + ("prev_hash", "hash")
RECORD_KEYS = frozenset(CONTENT_FIELDS) - {"ts"}     # what append() accepts; ts is the log's own clock


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


def day_start(day: dt.date | dt.datetime) -> str:
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


# Credentials people paste into questions, by the shapes their issuers give them (anywhere in a record):
# Slack bot/user/app/config tokens, OpenAI-style keys, GitHub tokens, AWS access key ids, Hugging Face tokens,
# PEM private keys. A Slack signing secret is 32 hex digits, a shape too common to look for everywhere (hashes,
# ids): it is looked for in the question only, where a person may paste it.
_TOKEN_RE = re.compile(r"\b(?:xox[abposrec]-[A-Za-z0-9-]{8,}|xapp-\d-[A-Za-z0-9-]{8,}|sk-[A-Za-z0-9_-]{20,}"
                       r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|AKIA[0-9A-Z]{16}"
                       r"|hf_[A-Za-z0-9]{30,})")
_PEM_RE = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S)
_HEX_SECRET_RE = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{32}(?![0-9A-Za-z])")
REDACTED = "[redacted token]"
REDACTED_SECRET = "[redacted secret]"


def _redact(text: str) -> str:
    return _PEM_RE.sub(REDACTED, _TOKEN_RE.sub(REDACTED, text))


def redact_question(text: str) -> tuple[str, list[str]]:
    """The question with credentials replaced, and what kinds were found (for the record to say so)."""
    kinds = []                                      # already redacted upstream (the Slack inbox) counts too
    if _TOKEN_RE.search(text) or _PEM_RE.search(text) or REDACTED in text:
        kinds.append("token or key")
    out = _redact(text)
    if _HEX_SECRET_RE.search(out) or REDACTED_SECRET in out:
        kinds.append("32-hex-digit secret (a Slack signing secret's shape)")
        out = _HEX_SECRET_RE.sub(REDACTED_SECRET, out)
    return out, kinds


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


def normalise(record: dict[str, Any]) -> dict[str, Any]:
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
    if out["question"]:
        out["question"], kinds = redact_question(out["question"])
        if kinds and isinstance(out["reply"], dict):       # the record says what was taken out, never the value
            out["reply"] = {**out["reply"], "redacted": kinds}
    if out["surface"] not in SURFACES:
        raise AuditError(f"unknown surface {out['surface']!r}", fix="use one of " + ", ".join(SURFACES))
    if not out["status"]:
        raise AuditError("an audit record needs a status", fix="pass the reply's status (answer, follow_up...)")
    return out


def decode(row: dict[str, Any], strict: bool = False) -> dict[str, Any]:
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


def encode_json(value: Any) -> str | None:
    """Stored text of a JSON column: compact, in the producer's key order (the hash sorts keys itself)."""
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# ----------------------------------------------------------------------------------------------------------
# what the log hands back


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
    forgotten: dict[str, int] = field(default_factory=dict)   # rows removed beside the audit log, per table



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


def team_gaps(replies: Iterable[Any]) -> dict[int, tuple[int, str, str]]:
    """{first seq: (last seq, prev_hash of the first, hash of the last)} of every run of rows removed by a per-team
    prune, from the `reply` of its checkpoint rows (status TEAM_PRUNE_STATUS); unreadable entries are skipped (the
    rows they would excuse then show as deleted)."""
    gaps: dict[int, tuple[int, str, str]] = {}
    for reply in replies:
        if isinstance(reply, str):
            try:
                reply = json.loads(reply)
            except ValueError:
                continue
        runs = ((reply or {}).get("team_prune") or {}).get("gaps") if isinstance(reply, dict) else None
        for run in runs or []:
            try:
                first, last, before, after = int(run[0]), int(run[1]), str(run[2]), str(run[3])
            except (TypeError, ValueError, IndexError):
                continue
            gaps[first] = (last, before, after)
    return gaps


def _bridge(gaps: dict[int, tuple[int, str, str]] | None, seq: int, prev: str, upto: int | None) -> tuple[int, str]:
    """Step over runs a per-team prune removed: a run starting at `seq` and hanging from `prev` continues the chain
    with the hash of its last row, as if the rows were there (the checkpoint that lists it is itself hashed)."""
    while gaps and seq in gaps and (upto is None or seq < upto) and gaps[seq][1] == prev:
        last, _, after = gaps[seq]
        seq, prev = last + 1, after
    return seq, prev


def verify_rows(rows: Iterable[dict[str, Any]], checkpoint: dict[str, Any] | None = None,
                high_water: int | None = None, gaps: dict[int, tuple[int, str, str]] | None = None
                ) -> VerifyResult:
    """Walk rows (as stored, JSON columns as text) in seq order; name the first row edited, deleted or moved.

    `checkpoint` is the latest prune checkpoint row (it says where the remaining chain starts and which hash it
    hangs from); `high_water` the largest seq ever issued (sqlite_sequence), to see rows deleted at the end;
    `gaps` the runs per-team prunes removed (team_gaps), stepped over only where they fit the chain exactly.
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
            row = decode(raw, strict=True)
        except ValueError:
            bad = [n for n in JSON_FIELDS if raw.get(n) is not None and not _is_json(raw.get(n))]
            return VerifyResult(False, checked, raw.get("id"),
                                f"column {', '.join(bad)} is not valid JSON: the row was edited after it was written")
        seq, rid = row.get("seq"), row.get("id")
        if isinstance(seq, int):
            expected_seq, expected_prev = _bridge(gaps, expected_seq, expected_prev, seq)
        problem = _position_problem(seq, rid, expected_seq, previous_id, anchor_name)
        if problem:
            return VerifyResult(False, checked, rid, problem)
        if row.get("hash") != record_hash(row, row.get("prev_hash") or ""):
            return VerifyResult(False, checked, rid,
                                "its content does not match its hash: the row was edited after it was written")
        if row.get("prev_hash") != expected_prev:
            return VerifyResult(False, checked, rid, _broken_link(row, iterator, previous_id, anchor_name))
        checked += 1
        previous_id, expected_prev, head = rid, row["hash"], row["hash"]
        expected_seq = seq + 1
    expected_seq, expected_prev = _bridge(gaps, expected_seq, expected_prev, None)
    if high_water is not None and high_water >= expected_seq:
        missing = format_id(expected_seq) + ("" if high_water == expected_seq else f"..{format_id(high_water)}")
        after = f"after {previous_id}" if previous_id else f"at {anchor_name}"
        return VerifyResult(False, checked, format_id(expected_seq),
                            f"{missing} missing {after}: the last rows were deleted "
                            f"(the log had reached {format_id(high_water)})")
    return VerifyResult(True, checked, head=head)


def _position_problem(seq: Any, rid: Any, expected_seq: int, previous_id: str | None, anchor_name: str) -> str | None:
    """Why row `rid` stored at `seq` is not where the chain expects it (`expected_seq`); None when it is."""
    if not isinstance(seq, int):
        return f"seq {seq!r} is not a number"
    if rid != format_id(seq):
        return (f"{rid} is stored at position {seq} (where {format_id(seq)} belongs): rows were "
                "reordered or renumbered")
    if seq < expected_seq:
        return (f"{rid} comes before the first row the chain allows ({format_id(expected_seq)}): "
                "rows were reordered or restored after a prune")
    if seq > expected_seq:
        missing = format_id(expected_seq) + ("" if seq == expected_seq + 1 else f"..{format_id(seq - 1)}")
        after = f"after {previous_id}" if previous_id else f"at {anchor_name}"
        return f"{missing} missing {after}: rows were deleted"
    return None


def _broken_link(row: dict[str, Any], later_rows: Iterator[dict[str, Any]], previous_id: str | None,
                 anchor_name: str) -> str:
    """Why `row`'s prev_hash is not the previous row's hash (reads on through `later_rows` to tell a reorder)."""
    target = row.get("prev_hash")
    follows = None
    for later in later_rows:                         # only on failure: is it chained to a later row?
        if later.get("hash") == target:
            follows = later.get("id")
            break
    if follows:
        return f"out of order: it chains to {follows}, which is stored after it: rows were reordered"
    if previous_id is None:
        return f"its prev_hash does not match {anchor_name}: rows before it were deleted or replaced"
    return (f"its prev_hash does not match the hash of {previous_id}: {previous_id} was "
            "re-hashed after an edit, or rows were removed or reordered")


def _is_json(text: Any) -> bool:
    try:
        json.loads(text)
        return True
    except (TypeError, ValueError):
        return False


def select_columns() -> str:
    """The column list of `advice`, quoted, in COLUMNS order (for SELECT and INSERT)."""
    return ", ".join(f'"{c}"' for c in COLUMNS)


def entry_of(row: dict[str, Any], duplicate: bool = False) -> AuditEntry:
    """The AuditEntry of a stored row."""
    row = decode(row)
    return AuditEntry(id=row["id"], seq=row["seq"], ts=row["ts"], hash=row["hash"], prev_hash=row["prev_hash"],
                      event_id=row.get("event_id"), duplicate=duplicate, row=row)
