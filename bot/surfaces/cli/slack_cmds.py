"""`gpu-advisor slack new-key | rotate-key | workspaces`: the operator's side of many workspaces (OAuth installs).

- `new-key` prints a fresh Fernet key for ADVISOR_TOKEN_KEY (the installed bot tokens are sealed with it).
- `rotate-key`: after putting a new key first in ADVISOR_TOKEN_KEY (`new,old`), re-encrypts every stored token
  with it in one transaction; the old key can then be removed. Refuses when a row opens with no listed key.
- `workspaces` lists the workspaces the app is installed in (team id, name, when): never a token.
"""
from __future__ import annotations

import datetime as dt

import click

from bot.surfaces.cli import HELP


@click.group(context_settings=HELP)
def slack() -> None:
    """Many workspaces: the key sealing installed tokens, its rotation, the installed workspaces."""


def _rows():
    from bot.records import config
    from bot.store.backend import open_installations
    from bot.store.tokens import TokenCipher
    return open_installations(config.db_target(), TokenCipher.from_env())


@slack.command("new-key")
def new_key_cmd() -> None:
    """Print a new random key for ADVISOR_TOKEN_KEY (keep it secret, with SLACK_CLIENT_SECRET)."""
    from bot.store.tokens import new_key
    click.echo(new_key())


@slack.command("rotate-key")
def rotate_key_cmd() -> None:
    """Re-encrypt every stored Slack token with the first key of ADVISOR_TOKEN_KEY."""
    with _rows() as rows:
        rows.check_keys()                      # every row must open before any is rewritten
        n = rows.rotate_keys()
    click.echo(f"Re-encrypted {n} stored token row(s) with the first key of ADVISOR_TOKEN_KEY; the other keys "
               "listed there can now be removed.")


@slack.command("workspaces")
def workspaces_cmd() -> None:
    """The workspaces the app is installed in (through /slack/install)."""
    with _rows() as rows:
        found = rows.workspaces()
    if not found:
        click.echo("Not installed in any workspace yet: open /slack/install on the bot's public URL.")
    for w in found:
        when = dt.datetime.fromtimestamp(float(w["installed_at"]), dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        click.echo(f"{w['team_id'] or w['enterprise_id']}  {w['team_name'] or '-'}  installed {when}")
