"""`gpu-advisor audit migrate --from sqlite:PATH --to postgresql://...`: copy an audit log to another database
(SQLite to PostgreSQL when moving to several replicas; any direction works) and verify the chain on arrival.

Why through an export file: the JSONL export is the one format already proven to round-trip every character and
hash (tests/test_audit.py), and both backends load it row for row (seq, ids and hashes as they were). The source
is verified first (a broken chain is not copied: that would launder it), the destination must hold no record,
and the copy is verified again with its head compared to the source's. Sessions, the inbox and Slack state are
not copied: sessions expire within hours, and the inbox should be drained (every job done) before moving.
"""
from __future__ import annotations

import pathlib
import tempfile
from typing import Any

import click

from bot.records.errors import AdvisorError
from bot.surfaces.cli.audit import _guarded, audit

__all__ = ["migrate_cmd", "parse_target", "migrate_log"]


class MigrateError(AdvisorError):
    """The copy cannot start or did not arrive intact."""


def parse_target(text: str) -> Any:
    """`sqlite:PATH` or a plain path -> a Path; `postgresql://...` stays the URL (printed without password)."""
    from bot.store.backend import is_postgres_url
    from bot.store.pg import DatabaseUrl
    text = (text or "").strip()
    if is_postgres_url(text):
        return DatabaseUrl(text)
    if text.lower().startswith("sqlite:"):
        text = text[len("sqlite:"):]
        text = text[2:] if text.startswith("//") else text       # sqlite://PATH as well as sqlite:PATH
    if not text:
        raise MigrateError("no database given", fix="write sqlite:PATH or postgresql://user@host/db")
    return pathlib.Path(text).expanduser()


def migrate_log(source: Any, dest: Any) -> tuple[int, Any]:
    """Copy every audit record of `source` into the empty log at `dest`; (records copied, dest's VerifyResult)."""
    from bot.store.backend import describe, open_audit
    if isinstance(source, pathlib.Path) and not source.is_file():
        raise MigrateError(f"{source} does not exist", fix="name the SQLite file the advisor wrote (ADVISOR_DB)")
    with open_audit(source) as src:
        before = src.verify()
        if not before.ok:
            raise MigrateError(f"the chain of {describe(source)} is broken at {before.first_bad} ({before.problem})",
                               fix="investigate with `gpu-advisor audit verify` first: a broken log is not copied")
        with tempfile.TemporaryDirectory(prefix="gpu-advisor-migrate-") as tmp:
            dump = pathlib.Path(tmp) / "audit.jsonl"
            with dump.open("w", encoding="utf-8", newline="") as handle:
                count = src.export("jsonl", handle)
            with open_audit(dest) as dst:
                dst.load_export(dump)
                after = dst.verify()
    if after.ok and (after.checked, after.head) != (before.checked, before.head):
        raise MigrateError(f"{describe(dest)} holds {after.checked} record(s) with head {after.head}, the source "
                           f"{before.checked} with head {before.head}",
                           fix="was the destination written to during the copy? Start again on an empty database")
    return count, after


@audit.command("migrate")
@click.option("--from", "source", required=True, metavar="sqlite:PATH",
              help="The log to copy: sqlite:PATH (or a path), or a postgresql:// URL.")
@click.option("--to", "dest", required=True, metavar="postgresql://...",
              help="An empty database to copy it into: a postgresql:// URL (or sqlite:PATH).")
@_guarded
def migrate_cmd(source: str, dest: str) -> None:
    """Copy the audit log to another database and verify the chain on arrival (exit 1 when it does not)."""
    from bot.store.backend import describe
    src, dst = parse_target(source), parse_target(dest)
    count, result = migrate_log(src, dst)
    if not result.ok:
        click.echo(f"FAILED: the copy in {describe(dst)} does not verify at {result.first_bad}: {result.problem}.",
                   err=True)
        raise click.exceptions.Exit(1)
    head = f", head {result.head[:16]}" if result.head else ""
    click.echo(f"copied {count} record(s) from {describe(src)} to {describe(dst)}; chain verified on arrival "
               f"({result.checked} record(s){head}).")
