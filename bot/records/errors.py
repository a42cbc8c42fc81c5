"""One error hierarchy: every message says what happened and how to fix it (and, where useful, "did you mean")."""
from __future__ import annotations

# The exit statuses of `gpu-advisor` (docs/cli.md, and the epilog of `gpu-advisor --help`): a script can tell a
# check that found something (1) from a mistake in the command (2), a name that is not on file (3) and a database or
# service that is down (4, worth retrying later).
EXIT_OK = 0
EXIT_FAILED = 1            # a check found a problem: `kb validate`, `audit verify`, `doctor`
EXIT_USAGE = 2             # a usage or configuration error (click's own usage errors are 2 too)
EXIT_NOT_FOUND = 3         # a named record is not on file: an audit id, a model, a GPU, a knowledge record
EXIT_UNAVAILABLE = 4       # a dependency cannot be used: the database (file, disk, PostgreSQL), Slack's API
EXIT_STATUSES = {EXIT_OK: "ok", EXIT_FAILED: "a check found a problem", EXIT_USAGE: "usage or configuration error",
                 EXIT_NOT_FOUND: "not found", EXIT_UNAVAILABLE: "a dependency is unavailable (database, Slack)"}


class AdvisorError(Exception):
    """Base of every error the product raises on purpose. `fix` tells the user what to do."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, fix: str | None = None, did_you_mean: list[str] | None = None):
        self.message = message
        self.fix = fix
        self.did_you_mean = [d for d in (did_you_mean or []) if d]
        super().__init__(self.render())

    def render(self) -> str:
        parts = [self.message.rstrip(".") + "."]
        if self.did_you_mean:
            parts.append("Did you mean: " + ", ".join(self.did_you_mean) + "?")
        if self.fix:
            fix = self.fix.rstrip(".")
            parts.append(fix[:1].upper() + fix[1:] + ".")
        return " ".join(parts)


class ConfigError(AdvisorError):
    """A setting (environment variable, flag) is missing or malformed."""


class KnowledgeError(AdvisorError):
    """The knowledge base or rules could not be loaded; `problems` lists each one with file, key and fix."""

    def __init__(self, problems: list["Problem"]):
        self.problems = problems
        head = f"{len(problems)} problem(s) in the knowledge base"
        super().__init__(head + ":\n" + "\n".join(f"  {p}" for p in problems),
                         fix="Correct the files named above, then run `gpu-advisor kb validate`")


class NotFound(AdvisorError):
    """A named thing (model, GPU, flavor, audit record) is not known."""

    exit_code = EXIT_NOT_FOUND


class Unavailable(AdvisorError):
    """Something the command needs cannot be reached or used right now: the database, PostgreSQL, Slack's API."""

    exit_code = EXIT_UNAVAILABLE


class InvalidRequest(AdvisorError):
    """The numbers or combination asked for cannot be estimated (QLoRA in fp32, ZeRO-3 on one GPU...)."""


class Problem:
    """One knowledge-base problem, located precisely enough to fix without searching."""

    def __init__(self, file: str, key: str, message: str, fix: str = ""):
        self.file, self.key, self.message, self.fix = file, key, message, fix

    def __str__(self) -> str:
        tail = f" Fix: {self.fix}" if self.fix else ""
        return f"{self.file}: {self.key}: {self.message}.{tail}"

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Problem({self!s})"
