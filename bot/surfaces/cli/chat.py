"""`gpu-advisor chat`: a conversation in the terminal on the same turn function as Slack.

- Choices are numbered: typing "2" answers with the second one listed.
- "details" prints the last answer's details; "help" shows examples without writing an audit record (only turns
  that give advice are recorded); "reset" starts over; "quit", "exit" or Ctrl-D leave.
- Ctrl-C clears the line being typed (or stops the turn being computed) and the conversation goes on.
- The lines typed are kept between sessions (readline history, ADVISOR_CHAT_HISTORY, default
  ~/.local/state/gpu-advisor/chat_history; set it empty to keep none).
"""
from __future__ import annotations

import getpass
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import click

from bot.surfaces.cli.output import clean_arg, print_reply, say

QUIT_WORDS = ("quit", "exit", "q", "退出")
DETAILS_WORDS = ("details", "detail", "more", "详细", "详情", "详细信息")
HELP_WORDS = ("help", "?", "帮助", "怎么用")
HISTORY_LINES = 1000


def run_chat(session: str | None) -> None:
    from bot.surfaces.service import Service
    svc = Service()
    sid = session or f"chat-{uuid.uuid4().hex[:8]}"
    last: dict[str, Any] = {}
    history = _line_editing()
    click.echo("gpu-advisor: ask which GPU instance to rent for a training, fine-tuning or serving job "
               "(in English or 中文). 'help' for examples, 'details' for the last answer's details, 'reset' to start "
               "over, 'quit' to leave.")
    try:
        while True:
            try:
                line = clean_arg(input("you> ")).strip()
            except KeyboardInterrupt:                   # Ctrl-C: drop the line, keep the conversation
                click.echo("")
                continue
            except EOFError:
                click.echo("")
                break
            if line.lower() in QUIT_WORDS:
                break
            if line:
                last = _one_line(svc, sid, line, last)
    finally:
        _save_history(history)


def _one_line(svc: Any, sid: str, line: str, last: dict[str, Any]) -> dict[str, Any]:
    """Answer one typed line; the reply that becomes `last` (what "details" and a number refer to)."""
    lang = last.get("lang") or "en"
    if line.lower() in DETAILS_WORDS:
        click.echo(last.get("details") or say("cli.no_details", lang))
        return last
    if line.lower() in HELP_WORDS:                      # not advice: answered, not recorded
        reply, _ = svc.core.turn(line, {})
        click.echo(reply.text)
        return last
    choices = last.get("choices") or []
    if line.isdigit() and 1 <= int(line) <= len(choices):
        line = choices[int(line) - 1]
        click.echo(f"  -> {line}")
    try:
        out = svc.ask(line, surface="cli", user=getpass.getuser(), session=sid)
    except KeyboardInterrupt:
        click.echo(say("cli.interrupted", lang))
        return last
    print_reply(out, details=False, hint="cli.chat_details_hint", numbered=True)
    click.echo(f"  (advice {out['advice_id']})")
    return out


def history_path() -> Path | None:
    raw = os.environ.get("ADVISOR_CHAT_HISTORY")
    if raw is not None:
        return Path(raw).expanduser() if raw.strip() else None
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "gpu-advisor" / "chat_history"


def _line_editing() -> Path | None:
    """Line editing and the kept history (arrow keys) where the platform has readline; stdin bytes that are not
    UTF-8 are replaced rather than raising. Returns the history file to save to, or None."""
    reconfigure = getattr(sys.stdin, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="surrogateescape")
    try:
        import readline
    except ImportError:
        return None
    path = history_path()
    if path is None or not sys.stdin.isatty():         # piped input is not a person's history
        return None
    try:
        if path.exists():
            readline.read_history_file(str(path))
    except OSError:
        return None
    readline.set_history_length(HISTORY_LINES)
    return path


def _save_history(path: Path | None) -> None:
    if path is None:
        return
    try:
        import readline
        path.parent.mkdir(parents=True, exist_ok=True)
        readline.write_history_file(str(path))
    except (ImportError, OSError):
        pass                                             # a read-only home: the conversation still worked
