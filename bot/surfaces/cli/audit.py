"""`gpu-advisor audit ...`: read, verify, export and prune the audit log (the click surface of bot.audit).

The database is `bot.config.db_path()` (ADVISOR_DB, else a per-user default). Usage errors (a bad date, an
unknown id, an unreadable database) print what was wrong and how to fix it, and exit with status 2; a broken
chain makes `verify` exit with status 1.
"""
from __future__ import annotations

import datetime as dt
import functools
import json
import sqlite3
import sys
import unicodedata
from typing import Any, Callable

import click

from bot.store.audit import AuditLog, format_id, parse_id
from bot.records.errors import AdvisorError

__all__ = ["audit"]


# ----------------------------------------------------------------------------------------------------------
# helpers


class DateParam(click.ParamType):
    """YYYY-MM-DD (a day in UTC)."""
    name = "DATE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> dt.date:
        if isinstance(value, dt.date):
            return value
        try:
            return dt.date.fromisoformat(str(value).strip())
        except ValueError:
            self.fail(f"{value!r} is not a date: write it as YYYY-MM-DD, e.g. 2025-03-01", param, ctx)


DATE = DateParam()


def _fail(message: str, code: int = 2) -> None:
    click.echo(f"Error: {message}", err=True)
    raise click.exceptions.Exit(code)


def _guarded(func: Callable) -> Callable:
    """Turn product errors and database errors into a clear message and exit status 2, never a traceback."""
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except AdvisorError as exc:
            _fail(exc.render(), exc.exit_code)
        except sqlite3.DatabaseError as exc:
            try:
                from bot.records.config import db_path
                where = str(db_path())
            except Exception:                      # pragma: no cover - config itself is broken
                where = "the audit database"
            _fail(f"cannot read {where} as an audit database ({exc}). Point ADVISOR_DB at the advisor's SQLite "
                  "file, or at a new path to start an empty log")
    return wrapper


def _open_log() -> AuditLog:
    from bot.records.config import db_path              # lazy: keeps `--help` fast and config errors inside _guarded
    return AuditLog(db_path())


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    if _width(text) <= limit:
        return text
    out, used = "", 0
    for ch in text:
        w = _width(ch)
        if used + w > limit - 1:
            break
        out, used = out + ch, used + w
    return out + "…"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max([_width(h)] + [_width(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c + " " * (w - _width(c)) for c, w in zip(cells, widths)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _when(ts: str | None) -> str:
    return (ts or "").replace("T", " ").replace("Z", "")[:16]


def _reply(row: dict[str, Any]) -> dict[str, Any]:
    return row["reply"] if isinstance(row.get("reply"), dict) else {}


def _top_pick(row: dict[str, Any]) -> str:
    recs = row.get("recommendations") or _reply(row).get("recommendations")
    if not isinstance(recs, list) or not recs or not isinstance(recs[0], dict):
        return "-"
    top = recs[0]
    gpus = f" ({top.get('gpu_count') or 1}x{top['gpu']})" if top.get("gpu") else ""
    return f"{top.get('instances') or 1} x {top.get('flavor') or '?'}{gpus}"


def _summary(row: dict[str, Any]) -> str:
    """The question, or for a checkpoint (no question) what it says."""
    return str(row.get("question") or _reply(row).get("text") or "")


def _price(rec: dict[str, Any]) -> str:
    price = rec.get("price_per_hour")
    if price is None:
        return "no price"
    return f"{price:g} {rec.get('currency') or ''}/h".replace(" /h", "/h")


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2)


# ----------------------------------------------------------------------------------------------------------
# commands


@click.group("audit")
def audit() -> None:
    """Read, verify, export and prune the audit log: one hash-chained record per reply the bot gave."""


@audit.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON array of full records instead of a table.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="Newest N records.")
@click.option("--user", metavar="U", help="Only records of this user id (Slack id, or the CLI's local user).")
@click.option("--since", type=DATE, help="Only records from this UTC day on (YYYY-MM-DD).")
@click.option("--session", metavar="ID", help="Only records of this session id.")
@_guarded
def list_cmd(as_json: bool, limit: int, user: str | None, since: dt.date | None, session: str | None) -> None:
    """List audit records, newest first."""
    with _open_log() as log:
        rows = log.list(limit=limit, user=user, since=since, session=session)
    if as_json:
        click.echo(_dump(rows))
        return
    if not rows:
        click.echo("No audit records" + (" match these filters." if (user or since or session) else " yet."))
        return
    table = [[r["id"], _when(r.get("ts")), r.get("surface") or "-", r.get("user") or "-", r.get("status") or "-",
              _top_pick(r), _clip(_summary(r), 48)]
             for r in rows]
    click.echo(_table(["ID", "WHEN (UTC)", "SURFACE", "USER", "STATUS", "TOP PICK", "QUESTION"], table))
    if len(rows) == limit:
        click.echo(f"(newest {limit}; use --limit or --since for more)")


@audit.command("show")
@click.argument("record_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="The full record as JSON.")
@_guarded
def show_cmd(record_id: str, as_json: bool) -> None:
    """Show one audit record: who asked what, the advice given, and why."""
    try:
        record_id = format_id(parse_id(record_id))
    except ValueError:
        _fail(f"{record_id!r} is not an audit id; ids look like A000042 (see `gpu-advisor audit list`)")
    with _open_log() as log:
        row = log.get(record_id)
        span = log.id_range() if row is None else None
        job = _delivery(log, record_id) if row is not None else None
    if row is None:
        held = f"the log holds {span[0]}..{span[1]}" if span else "the log is empty"
        _fail(f"no audit record {record_id} ({held}); run `gpu-advisor audit list` to see ids")
    if as_json:
        click.echo(_dump(row if job is None else {**row, "delivery": _delivery_json(job)}))
        return
    click.echo(_render(row, job))


def _delivery(log: AuditLog, record_id: str) -> Any:
    """The Slack inbox job that carried this reply (None for the CLI, or a log older than the inbox)."""
    from bot.store.inbox import Inbox
    with Inbox(log.path) as inbox:
        return inbox.delivery(record_id)


def _delivery_json(job: Any) -> dict[str, Any]:
    return {"job": job.id, "state": job.state, "delivered": job.delivered, "attempts": job.attempts,
            "error": job.error}


def _delivery_text(job: Any) -> str:
    if job.delivered:
        return f"yes (job {job.id}, {job.attempts} attempt(s))"
    if job.delivered is False:
        return f"NO: {job.error or 'unknown reason'} (job {job.id}, {job.attempts} attempt(s))"
    return f"not yet ({job.state}, job {job.id})"


def _render(row: dict[str, Any], job: Any = None) -> str:
    reply = _reply(row)
    where = " ".join(f"{k} {row[k]}" for k in ("team", "channel", "user") if row.get(k))
    lines = [f"{row['id']}  {_when(row.get('ts'))} UTC  {row.get('surface')}" + (f"  {where}" if where else "")]

    def kv(key: str, value: Any) -> None:
        if value not in (None, "", [], {}):
            lines.append(f"{key:<10}{value}")

    kv("session", row.get("session"))
    kv("event", row.get("event_id"))
    kv("delivered", _delivery_text(job) if job is not None else None)
    kv("question", row.get("question"))
    kv("status", f"{row.get('status')}" + (f" (intent {row['intent']})" if row.get("intent") else ""))
    kv("kb", row.get("kb_version"))
    slots = row.get("slots")
    if isinstance(slots, dict) and slots:
        kv("slots", ", ".join(f"{k}={v}" for k, v in slots.items() if v not in (None, "", [])))
    memory = reply.get("memory") if isinstance(reply.get("memory"), dict) else None
    if memory and memory.get("per_gpu_gib") is not None:
        kv("memory", f"{memory['per_gpu_gib']} GiB per GPU")
    recs = row.get("recommendations") or reply.get("recommendations") or []
    if recs:
        lines.append("Recommendations")
        for i, rec in enumerate(r for r in recs if isinstance(r, dict)):
            fit = "fits" if rec.get("fits") else "does not fit" if rec.get("fits") is False else ""
            gpus = f"{rec.get('gpu_count')} x {rec.get('gpu')}" if rec.get("gpu") else "?"
            lines.append(f"  {i + 1}. {rec.get('instances') or 1} x {rec.get('flavor')} ({gpus}, "
                         f"{rec.get('provider') or '?'})  {_price(rec)}  {fit}".rstrip())
    checklist = [c for c in reply.get("checklist") or [] if isinstance(c, dict)]
    if checklist:
        lines.append("Checklist")
        for item in checklist:
            lines.append(f"  {item.get('status', '?'):<5} {item.get('item', '?'):<9} {_clip(item.get('text', ''), 90)}")
    trace = [t for t in row.get("rule_trace") or [] if isinstance(t, dict)]
    if trace:
        fired = [str(t.get("rule")) for t in trace if t.get("fired")]
        lines.append(f"Rules     {len(fired)} of {len(trace)} fired" + (f": {', '.join(fired)}" if fired else ""))
    text = reply.get("text")
    if text:
        lines.append("Reply")
        lines.extend("  " + part for part in str(text).splitlines())
    lines.append(f"hash      {row.get('hash')}")
    lines.append(f"prev      {row.get('prev_hash')}")
    return "\n".join(lines)


@audit.command("verify")
@_guarded
def verify_cmd() -> None:
    """Recompute the hash chain; exit 1 and name the first row edited, deleted or reordered."""
    with _open_log() as log:
        result = log.verify()
    if result.ok:
        click.echo(f"ok: {result.checked} record(s) checked, chain intact.")
        if result.head:
            click.echo(f"head hash {result.head} (keep a copy elsewhere to detect a rewritten log)")
        return
    click.echo(f"FAILED at {result.first_bad}: {result.problem}.", err=True)
    click.echo(f"{result.checked} record(s) before it are intact. Export the log "
               "(`gpu-advisor audit export --format jsonl`) before changing anything.", err=True)
    raise click.exceptions.Exit(1)


@audit.command("export")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), required=True, help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), help="File to write (default: stdout).")
@_guarded
def export_cmd(fmt: str, output: str | None) -> None:
    """Write every record, oldest first, with all columns (JSON columns as JSON)."""
    with _open_log() as log:
        if output:
            with open(output, "w", encoding="utf-8", newline="") as handle:
                count = log.export(fmt, handle)
            click.echo(f"exported {count} record(s) to {output}", err=True)
        else:
            log.export(fmt, sys.stdout)


@audit.command("prune")
@click.option("--before", type=DATE, required=True, help="Delete records dated before this UTC day (YYYY-MM-DD).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@_guarded
def prune_cmd(before: dt.date, yes: bool) -> None:
    """Retention: delete the oldest records and leave a checkpoint so the rest still verifies."""
    with _open_log() as log:
        count = log.prunable(before)
        if not count:
            click.echo(f"Nothing to prune: no record is dated before {before.isoformat()}.")
            return
        if not yes:
            click.confirm(f"Delete {count} audit record(s) dated before {before.isoformat()}? They cannot be "
                          "restored unless you exported them", abort=True)
        result = log.prune(before)
    click.echo(f"Pruned {result.pruned} record(s) ({result.first}..{result.last}); checkpoint {result.checkpoint} "
               "anchors the rest. `gpu-advisor audit verify` checks it.")
