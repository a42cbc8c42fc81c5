"""SQLite failures about the file, the folder or the disk, turned into one clear message: what is wrong, which
file, how to fix it. Every store class opens and writes through bot/store/db.py, which raises StorageError
(an AdvisorError: the CLI prints it and exits non-zero; the Slack app reports it on /readyz and to the user).

Errors about a query itself (a constraint, the append-only triggers) are not storage faults and pass unchanged.
"""
from __future__ import annotations

import pathlib
import sqlite3

from bot.records.errors import EXIT_USAGE, Unavailable

__all__ = ["StorageError", "StorageRefused", "storage_error", "check_path"]


class StorageError(Unavailable):
    """The database file cannot be opened, read or written (exit status 4: a dependency is unavailable)."""


class StorageRefused(StorageError):
    """The database answers but cannot serve this request (a file from a newer release, an SQLite-only operation on
    PostgreSQL): not an outage but a usage or configuration error, exit status 2."""

    exit_code = EXIT_USAGE


_KINDS = (   # (what SQLite says, what is wrong, how to fix it); {path}, {folder} filled in
    (("readonly", "read-only"),
     "{path} is read-only (the file, its folder or the mount): the advisor cannot record anything",
     "make the file and its folder writable (chmod u+w, or remount read-write), or point ADVISOR_DB at a "
     "writable path"),
    (("disk is full", "database or disk is full"),
     "the disk holding {path} is full: nothing can be recorded",
     "free space on that disk (`df -h {folder}`), or point ADVISOR_DB at another disk"),
    (("file is not a database", "malformed", "not a database", "file is encrypted"),
     "{path} is damaged or is not an SQLite database",
     "move it aside and restore the latest `gpu-advisor audit backup` copy, or start a new log by pointing "
     "ADVISOR_DB at a new path"),
    (("disk i/o error",),
     "reading or writing {path} failed with a disk I/O error",
     "check the disk and the mount (dmesg), then run `gpu-advisor doctor`"),
)


def check_path(path: pathlib.Path) -> StorageError | None:
    """What is wrong with `path` before SQLite even tries (a directory, a missing folder), or None."""
    if path.is_dir():
        return StorageError(f"ADVISOR_DB={path} is a directory, not a database file",
                            fix=f"point ADVISOR_DB at a file, e.g. {path / 'advisor.db'}")
    if not path.parent.exists():
        return StorageError(f"the folder of ADVISOR_DB={path} does not exist",
                            fix=f"create it (mkdir -p {path.parent}) or point ADVISOR_DB elsewhere")
    return None


def storage_error(exc: BaseException, path: pathlib.Path | str) -> StorageError | None:
    """The StorageError for an SQLite failure about the file or disk; None for any other error."""
    if not isinstance(exc, sqlite3.Error) or isinstance(exc, sqlite3.IntegrityError):
        return None
    path = pathlib.Path(path)
    text = str(exc).lower()
    for needles, what, fix in _KINDS:
        if any(n in text for n in needles):
            return StorageError(what.format(path=path, folder=path.parent) + f" (SQLite: {exc})",
                                fix=fix.format(path=path, folder=path.parent))
    if "unable to open" in text:
        return check_path(path) or StorageError(
            f"{path} cannot be opened (SQLite: {exc})",
            fix="check that the file and its folder exist and are readable and writable by this user")
    return None
