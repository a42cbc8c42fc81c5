"""`gpu-advisor audit ...`: read, verify, export and prune the audit log (the click surface of bot.audit).

The database is `bot.config.db_path()` (ADVISOR_DB, else a per-user default). Errors print what was wrong and how
to fix it, with the statuses of docs/cli.md: a bad date or malformed id 2, an id not in the log 3, a database that
cannot be read 4; a broken chain makes `verify` exit with status 1.
"""
from __future__ import annotations

import datetime as dt
import functools
import json
import os
import re
import sqlite3
import sys
import unicodedata
from typing import Any, Callable

import click

from bot.store.audit import AuditLog, format_id, parse_id
from bot.surfaces.cli import HELP
from bot.records.errors import EXIT_FAILED, EXIT_NOT_FOUND, EXIT_UNAVAILABLE, AdvisorError, Unavailable

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
    """Turn product errors and database errors into a clear message and their exit status (a database that cannot
    be read: 4), never a traceback."""
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
            except Exception:  # noqa: BLE001 # pragma: no cover - config itself is broken
                where = "the audit database"
            _fail(f"cannot read {where} as an audit database ({exc}). Point ADVISOR_DB at the advisor's SQLite "
                  "file, or at a new path to start an empty log", EXIT_UNAVAILABLE)
    return wrapper


def _open_log() -> AuditLog:
    from bot.records.config import db_target            # lazy: keeps `--help` fast and config errors inside _guarded
    from bot.store.backend import open_audit
    return open_audit(db_target())


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


# Stored questions are whatever people typed (or pasted into Slack): never let them drive the terminal. C0
# controls (ESC starts colour, cursor and title sequences), DEL, C1 controls (0x9b is a one-byte CSI) and
# bidirectional overrides (which reorder what is shown) are dropped from plain output and escaped in JSON.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _terminal(text: str) -> str:
    """`text` without control and escape characters (newlines and tabs kept), safe to print."""
    return _CONTROL.sub("", text)


def _dump(obj: Any) -> str:
    text = json.dumps(obj, ensure_ascii=False, indent=2)         # C0 and DEL are escaped by json already
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


# ----------------------------------------------------------------------------------------------------------
# commands


@click.group("audit", context_settings=HELP)
def audit() -> None:
    """Read, verify, export and prune the audit log: one hash-chained record per reply the bot gave."""


@audit.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON array of full records instead of a table.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="Newest N records.")
@click.option("--user", metavar="U", help="Only records of this user id (Slack id, or the CLI's local user).")
@click.option("--since", type=DATE, help="Only records from this UTC day on (YYYY-MM-DD).")
@click.option("--session", metavar="ID", help="Only records of this session id.")
@click.option("--team", metavar="T", help="Only records of this Slack workspace (team id, e.g. T0123ABCD).")
@_guarded
def list_cmd(as_json: bool, limit: int, user: str | None, since: dt.date | None, session: str | None,
             team: str | None) -> None:
    """List audit records, newest first."""
    with _open_log() as log:
        rows = log.list(limit=limit, user=user, since=since, session=session, team=team)
    if as_json:
        click.echo(_dump(rows))
        return
    if not rows:
        click.echo("No audit records" + (" match these filters." if (user or since or session or team) else " yet."))
        return
    table = [[r["id"], _when(r.get("ts")), r.get("surface") or "-", r.get("user") or "-", r.get("status") or "-",
              _top_pick(r), _clip(_summary(r), 48)]
             for r in rows]
    click.echo(_terminal(_table(["ID", "WHEN (UTC)", "SURFACE", "USER", "STATUS", "TOP PICK", "QUESTION"], table)))
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
        _fail(f"no audit record {record_id} ({held}); run `gpu-advisor audit list` to see ids", EXIT_NOT_FOUND)
    if as_json:
        click.echo(_dump(row if job is None else {**row, "delivery": _delivery_json(job)}))
        return
    click.echo(_terminal(_render(row, job)))


def _delivery(log: AuditLog, record_id: str) -> Any:
    """The Slack inbox job that carried this reply (None for the CLI, or a log older than the inbox)."""
    from bot.store.backend import open_inbox
    with open_inbox(log.path) as inbox:
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
    if reply.get("details"):                          # the record keeps the whole answer: the fold is shown too
        lines.extend("  " + part for part in str(reply["details"]).splitlines())
    lines.append(f"hash      {row.get('hash')}")
    lines.append(f"prev      {row.get('prev_hash')}")
    return "\n".join(lines)


@audit.command("verify", epilog="Exit status: 0 intact, 1 a row edited, deleted or reordered (or an anchor that "
                                 "does not hold), 4 the database cannot be read.")
@click.option("--anchors", "anchors_file", type=click.Path(exists=True, dir_okay=False),
              help="Also check the anchors in this file (written by `audit anchor`): no anchored row was "
                   "truncated or rewritten.")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object: ok, checked, head, first_bad, problem, anchors, anchor_problems.")
@_guarded
def verify_cmd(anchors_file: str | None, as_json: bool) -> None:
    """SQLite's integrity check, then the hash chain; exit 1 and name the first row edited, deleted or reordered."""
    from bot.store.anchors import check_anchors, read_anchors
    with _open_log() as log:
        result = log.verify()
        anchors = read_anchors(_read_text(anchors_file)) if anchors_file else []
        problems = check_anchors(log, anchors) if result.ok and anchors else []
    if as_json:
        empty = bool(anchors_file and not anchors)
        ok = result.ok and not problems and not empty
        click.echo(_dump({"ok": ok, "checked": result.checked, "head": result.head or None,
                          "first_bad": result.first_bad or None, "problem": result.problem or None,
                          "anchors": len(anchors) if anchors_file else None,
                          "anchor_problems": [str(p) for p in problems]
                          + ([f"{anchors_file} holds no anchor written by `gpu-advisor audit anchor`"]
                             if empty else [])}))
        if not ok:
            raise click.exceptions.Exit(EXIT_FAILED)
        return
    if result.ok and not problems:
        click.echo(f"ok: {result.checked} record(s) checked, chain intact.")
        if anchors:
            click.echo(f"ok: {len(anchors)} anchor(s) from {anchors_file} hold (nothing anchored was truncated "
                       "or rewritten).")
        if result.head:
            click.echo(f"head hash {result.head} (`gpu-advisor audit anchor` keeps a copy elsewhere)")
        if anchors_file and not anchors:
            _fail(f"{anchors_file} holds no anchor written by `gpu-advisor audit anchor`", EXIT_FAILED)
        return
    if not result.ok:
        where = f" at {result.first_bad}" if result.first_bad else ""
        click.echo(f"FAILED{where}: {result.problem}.", err=True)
        click.echo(f"{result.checked} record(s) before it are intact. Export the log "
                   "(`gpu-advisor audit export --format jsonl`) before changing anything.", err=True)
    for problem in problems:
        click.echo(f"FAILED: {problem}.", err=True)
    raise click.exceptions.Exit(EXIT_FAILED)


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


@audit.command("anchor")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Append the anchor to this file.")
@click.option("--slack-channel", help="Post the anchor to this Slack channel id (uses SLACK_BOT_TOKEN).")
@_guarded
def anchor_cmd(output: str | None, slack_channel: str | None) -> None:
    """Write the chain's head (count, last id, hash, time) where the database cannot rewrite it: a file, a Slack
    channel, or stdout (for a cron job). `audit verify --anchors FILE` checks the log against such copies."""
    from bot.store.anchors import make_anchor
    with _open_log() as log:
        line = json.dumps(make_anchor(log), sort_keys=True)
    if output:
        with open(output, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
        click.echo(f"anchor appended to {output}", err=True)
    if slack_channel:
        _post_anchor(slack_channel, line)
        click.echo(f"anchor posted to Slack channel {slack_channel}", err=True)
    if not output and not slack_channel:
        click.echo(line)


def _post_anchor(channel: str, line: str) -> None:
    """One chat.postMessage with the bot's token (SLACK_BOT_TOKEN, SLACK_API_BASE_URL as the app uses them)."""
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError
    token = (os.environ.get("SLACK_BOT_TOKEN") or "").strip()
    if not token:
        raise AdvisorError("posting an anchor to Slack needs SLACK_BOT_TOKEN", fix="set it, or use --output FILE")
    base = (os.environ.get("SLACK_API_BASE_URL") or "").strip() or "https://slack.com/api/"
    try:
        WebClient(token=token, base_url=base.rstrip("/") + "/", timeout=15).chat_postMessage(
            channel=channel, text=f"gpu-advisor audit anchor: {line}", unfurl_links=False)
    except SlackApiError as exc:
        raise AdvisorError(f"Slack refused the anchor post: {exc.response.get('error')}",
                           fix="invite the bot to the channel (/invite @gpu-advisor) and check the channel id") \
            from None
    except OSError as exc:                             # no route, DNS, refused, timed out: try again later
        raise Unavailable(f"cannot reach Slack at {base} to post the anchor ({exc})",
                          fix="check the network (and SLACK_API_BASE_URL), or use --output FILE") from None


@audit.command("backup")
@click.argument("target", type=click.Path(dir_okay=False))
@_guarded
def backup_cmd(target: str) -> None:
    """A consistent copy of the whole database (SQLite online backup) while the bot keeps running."""
    with _open_log() as log:
        log.checkpoint()
        try:
            size = log.backup(target)
        except FileExistsError:
            _fail(f"{target} already exists; name a new file (backups never overwrite)")
        damage = _integrity_of(target)
    if damage:
        _fail(f"the copy at {target} fails SQLite's integrity check ({'; '.join(damage)}): the source is damaged "
              "(run `gpu-advisor audit verify`)", 1)
    click.echo(f"backed up {log.path} to {target} ({size / 2**20:.1f} MiB); integrity check ok.")


def _integrity_of(path: str) -> list[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        found = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(5)")]
    finally:
        conn.close()
    return [] if found == ["ok"] else found


@audit.command("checkpoint")
@_guarded
def checkpoint_cmd() -> None:
    """Copy SQLite's write-ahead log into the database file and truncate it (before copying the file by hand)."""
    with _open_log() as log:
        logged, copied = log.checkpoint()
    click.echo(f"checkpoint: {copied} of {logged} page(s) of the write-ahead log copied into {log.path}.")


@audit.command("export")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), required=True, help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), help="File to write (default: stdout).")
@click.option("--team", metavar="T", help="Only this Slack workspace's records (a subset: it does not verify as a "
                                          "chain on its own; export without --team for an archive).")
@_guarded
def export_cmd(fmt: str, output: str | None, team: str | None) -> None:
    """Write every record, oldest first, with all columns (JSON columns as JSON)."""
    from bot.store.export import write_export
    with _open_log() as log:
        rows = log.iter_all() if not team else (r for r in log.iter_all() if r.get("team") == team)
        if output:
            with open(output, "w", encoding="utf-8", newline="") as handle:
                count = write_export(rows, fmt, handle)
            click.echo(f"exported {count} record(s) to {output}", err=True)
        else:
            write_export(rows, fmt, sys.stdout)


@audit.command("prune")
@click.option("--before", type=DATE, help="Delete records dated before this UTC day (YYYY-MM-DD). With --team, "
                                          "default: today minus the workspace's retention (App Home).")
@click.option("--team", metavar="T", help="Only this Slack workspace's records (team id); the rest of the chain "
                                          "stays and still verifies.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@_guarded
def prune_cmd(before: dt.date | None, team: str | None, yes: bool) -> None:
    """Retention: delete the oldest records and leave a checkpoint so the rest still verifies."""
    if team:
        _prune_team(team, before, yes)
        return
    if before is None:
        _fail("Missing option '--before' (or --team T, to use that workspace's retention).")
    with _open_log() as log:
        count = log.prunable(before)
        if count and not yes:
            click.confirm(f"Delete {count} audit record(s) dated before {before.isoformat()}? They cannot be "
                          "restored unless you exported them", abort=True)
        result = log.prune(before)
        compacted = log.compact()              # SQLite: no free page or log frame keeps a deleted row
    _report(result, compacted, f"no record is dated before {before.isoformat()}",
            f"Pruned {result.pruned} record(s) ({result.first}..{result.last}); checkpoint {result.checkpoint} "
            "anchors the rest. `gpu-advisor audit verify` checks it.")


def _report(result: Any, compacted: bool, nothing: str, pruned: str) -> None:
    """What a prune did: the audit records (`pruned`, or `nothing` when none), what went beside them, and a
    note when the file could not be compacted."""
    if not compacted:
        click.echo(_NOT_COMPACTED, err=True)
    head = pruned if result.pruned else f"Nothing to prune in the audit log: {nothing}."
    click.echo(head + _forgotten(result.forgotten))


_NOT_COMPACTED = ("note: the database file could not be compacted (another process is writing to it), so deleted "
                  "text may stay readable in its free pages until it is: run the same prune again while the bot "
                  "is stopped")


def _forgotten(gone: dict[str, int]) -> str:
    """What a prune removed beside the audit log (bot/store/retention.py), as one sentence; '' when nothing."""
    names = {"inbox": "finished Slack job(s)", "sessions": "conversation session(s)", "slack_events": "event id(s)",
             "feedback": "feedback vote(s)", "slack_threads": "answered thread(s)"}
    parts = [f"{n} {names.get(table, table)}" for table, n in gone.items() if n]
    return (" Also removed, dated before the same day: " + ", ".join(parts) + ".") if parts else ""


def _prune_team(team: str, before: dt.date | None, yes: bool) -> None:
    """`prune --team T`: T's records before --before, or before today minus T's retention days (App Home)."""
    from bot.records.config import db_target
    from bot.store.backend import open_slack_state
    if before is None:
        with open_slack_state(db_target()) as state:
            days = state.team_settings(team).get("retention_days")
        if not days:
            _fail(f"workspace {team} has no retention set: pass --before YYYY-MM-DD, or let its admin set "
                  "'Keep audit records for (days)' in the workspace settings on the App Home")
        before = dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=int(days))
        click.echo(f"Workspace {team} keeps records {days} days: pruning those dated before {before.isoformat()}.")
    with _open_log() as log:
        count = log.prunable_team(team, before)
        if count and not yes:
            click.confirm(f"Delete {count} audit record(s) of workspace {team} dated before {before.isoformat()}? "
                          "They cannot be restored unless you exported them", abort=True)
        result = log.prune_team(team, before)
        compacted = log.compact()
    _report(result, compacted, f"no record of {team} is dated before {before.isoformat()}",
            f"Pruned {result.pruned} record(s) of {team} ({result.first}..{result.last}); checkpoint "
            f"{result.checkpoint} lists them, so the rest still verifies (`gpu-advisor audit verify`).")


@audit.command("stats")
@click.option("--since", type=DATE, help="Only advice from this UTC day on (YYYY-MM-DD).")
@click.option("--json", "as_json", is_flag=True, help="A JSON array, one object per week and intent.")
@_guarded
def stats_cmd(since: dt.date | None, as_json: bool) -> None:
    """Answers, follow-ups and Helpful / Not helpful feedback by ISO week and intent."""
    from bot.records.config import db_path
    from bot.store.stats import usage_stats
    rows = usage_stats(db_path(), since)
    if as_json:
        click.echo(_dump([r.as_dict() for r in rows]))
        return
    if not rows:
        click.echo("No advice recorded" + (" since then." if since else " yet."))
        return

    def share(helpful: int, votes: int) -> str:
        return f"{100 * helpful / votes:.0f}%" if votes else "-"

    table = [[r.week, r.intent, str(r.turns), str(r.answers), str(r.asked_back), str(r.follow_ups), str(r.helpful),
              str(r.not_helpful), share(r.helpful, r.helpful + r.not_helpful)] for r in rows]
    total = [sum(getattr(r, k) for r in rows) for k in ("turns", "answers", "asked_back", "follow_ups", "helpful",
                                                         "not_helpful")]
    table.append(["all", "", *map(str, total), share(total[4], total[4] + total[5])])
    click.echo(_table(["WEEK", "INTENT", "TURNS", "ANSWERS", "ASKED BACK", "FOLLOW-UPS", "HELPFUL", "NOT HELPFUL",
                       "HELPFUL %"], table))
