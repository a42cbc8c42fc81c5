"""SQLite plumbing shared by the audit log, the session store and the Slack inbox: one connection per object, WAL,
a busy timeout, and transactions that hold the object's lock (so threads of one process never interleave a
transaction). Failures about the file or the disk (read-only, full, damaged, a directory) leave here as one
StorageError that says what is wrong and how to fix it (bot/store/faults.py), never as a bare sqlite3 error."""
from __future__ import annotations

import os
import pathlib
import sqlite3
import threading
import time
from typing import Any

from sqlite_utils import Database

from bot.store.faults import check_path, storage_error

DEFAULT_TIMEOUT_S = 30.0


def connect(path: str | os.PathLike, timeout: float = DEFAULT_TIMEOUT_S) -> Database:
    """A sqlite-utils Database on `path` with a busy timeout, usable from any thread (callers hold a lock).
    secure_delete: a deleted row is overwritten with zeros, not left readable in a free page, so what retention
    deletes (the questions) is gone from the file too once the write-ahead log is checkpointed."""
    conn = sqlite3.connect(str(path), timeout=timeout, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    conn.execute("PRAGMA secure_delete = ON")
    return Database(conn)


def enable_wal(db: Database, deadline_s: float = DEFAULT_TIMEOUT_S) -> None:
    """PRAGMA journal_mode=WAL, retried while another process holds the lock on a brand-new file."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            db.conn.execute("PRAGMA journal_mode=WAL").fetchone()   # in-memory databases answer "memory"
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > end:
                raise
            time.sleep(0.01)


class Txn:
    """`with owner._write() as conn:` -- BEGIN (IMMEDIATE) under the owner's lock; COMMIT, or ROLLBACK on error."""

    def __init__(self, owner: "LockedDatabase", begin: str):
        self.owner, self.begin = owner, begin

    def __enter__(self) -> sqlite3.Connection:
        self.owner._lock.acquire()
        try:
            self.owner.db.conn.execute(self.begin)
        except BaseException as exc:
            self.owner._lock.release()
            self.owner._raise_storage(exc)
            raise
        return self.owner.db.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        conn = self.owner.db.conn
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK" if exc_type else "COMMIT")
        except sqlite3.Error as failed:
            self.owner._raise_storage(failed)
            raise
        finally:
            self.owner._lock.release()
        if exc is not None:
            self.owner._raise_storage(exc)


class LockedDatabase:
    """Base of AuditLog and SessionStore: `self.db` (sqlite-utils) and `self._lock` are set by the subclass."""

    db: Database
    _lock: threading.RLock

    def _open(self, path: str | os.PathLike, timeout: float) -> None:
        self._lock = threading.RLock()
        self._path = pathlib.Path(path)
        problem = check_path(self._path) if str(path) != ":memory:" else None
        if problem:
            raise problem
        try:
            self.db = connect(path, timeout)
            enable_wal(self.db, timeout)
        except sqlite3.Error as exc:
            self._raise_storage(exc)
            raise

    def _raise_storage(self, exc: BaseException) -> None:
        """Raise the StorageError for `exc` when it is about the file or the disk; return otherwise."""
        problem = storage_error(exc, getattr(self, "_path", "the database"))
        if problem is not None:
            raise problem from exc

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def integrity(self, limit: int = 5) -> list[str]:
        """SQLite's integrity check (every page read): [] when the file is sound, else up to `limit` problems."""
        with self._read() as conn:
            found = [str(r[0]) for r in conn.execute(f"PRAGMA integrity_check({int(limit)})")]
        return [] if found == ["ok"] else found

    def backup(self, target: str | os.PathLike) -> int:
        """A consistent copy of the whole file (every table) by SQLite's online backup, taken while others keep
        writing; refuses to overwrite. Returns the copy's size in bytes."""
        target = pathlib.Path(target)
        if target.exists():
            raise FileExistsError(f"{target} already exists")
        dest = sqlite3.connect(str(target))
        try:
            with self._lock:
                self.db.conn.backup(dest)
        except sqlite3.Error as exc:
            dest.close()
            target.unlink(missing_ok=True)
            self._raise_storage(exc)
            raise
        dest.close()
        return target.stat().st_size

    def checkpoint(self) -> tuple[int, int]:
        """Copy the write-ahead log into the database file and truncate it; (pages in the log, pages copied)."""
        with self._lock:
            try:
                _busy, logged, copied = self.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.Error as exc:
                self._raise_storage(exc)
                raise
        return logged, copied

    def compact(self) -> bool:
        """After deleting what must not be kept (`audit prune`): rewrite the file (VACUUM) and truncate the
        write-ahead log, so no free page or log frame still holds a deleted row (secure_delete alone left 1 of 20
        deleted rows readable in a bare table: the cell next to the page's free area). False when another
        process is writing meanwhile (the bot): then run the prune again while it is stopped."""
        with self._lock:
            try:
                self.db.conn.execute("VACUUM")
                self.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) or "busy" in str(exc):
                    return False
                self._raise_storage(exc)
                raise
        return True

    def _write(self) -> Txn:
        """BEGIN IMMEDIATE: the write lock is taken before anything is read, so read-then-insert is atomic."""
        return Txn(self, "BEGIN IMMEDIATE")

    def _read(self) -> Txn:
        """One read snapshot (WAL readers see the database as of their first read)."""
        return Txn(self, "BEGIN")
