"""What `ask` and `chat` print: a reply's short form, its choices, then its details or how to see them.

Shared by bot/surfaces/cli/main.py and chat.py (neither imports the other)."""
from __future__ import annotations

from typing import Any

import click


def clean_arg(text: str) -> str:
    """Text as the user meant it: bytes that were not UTF-8 (Python keeps them as lone surrogates in argv and
    stdin) become U+FFFD, so they cannot crash the parser, the session store or the audit log."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def say(key: str, lang: str, **ctx: Any) -> str:
    from bot.render.templates import default_templates
    return default_templates().say(key, lang, **ctx)


def print_reply(out: dict[str, Any], details: bool, hint: str = "cli.details_hint", numbered: bool = False) -> None:
    """The reply's short form, its choices (numbered in chat: typing the number picks one), then the details (or,
    with `hint`, how to see them)."""
    click.echo(out["text"])
    choices = out.get("choices") or []
    if choices and numbered:
        click.echo("  " + "   ".join(f"{i}) {c}" for i, c in enumerate(choices, 1)))
    elif choices:
        click.echo("  [" + " | ".join(choices) + "]")
    if out.get("details") and details:
        click.echo(out["details"])
    elif out.get("details"):
        click.echo(say(hint, out.get("lang") or "en"))
