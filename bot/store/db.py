"""SQLite plumbing shared by the audit log and the session store: one connection per object, WAL, a busy timeout,
and transactions that hold the object's lock (so threads of one process never interleave a transaction)."""
from __future__ import annotations

import os
import sqlite3
import threading
import time
from typing import Any

from sqlite_utils import Database

DEFAULT_TIMEOUT_S = 30.0


def connect(path: str | os.PathLike, timeout: float = DEFAULT_TIMEOUT_S) -> Database:
    """A sqlite-utils Database on `path` with a busy timeout, usable from any thread (callers hold a lock)."""
    conn = sqlite3.connect(str(path), timeout=timeout, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
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
        except BaseException:
            self.owner._lock.release()
            raise
        return self.owner.db.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        conn = self.owner.db.conn
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.owner._lock.release()


class LockedDatabase:
    """Base of AuditLog and SessionStore: `self.db` (sqlite-utils) and `self._lock` are set by the subclass."""

    db: Database
    _lock: threading.RLock

    def _open(self, path: str | os.PathLike, timeout: float) -> None:
        self._lock = threading.RLock()
        self.db = connect(path, timeout)
        enable_wal(self.db, timeout)

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self) -> Txn:
        """BEGIN IMMEDIATE: the write lock is taken before anything is read, so read-then-insert is atomic."""
        return Txn(self, "BEGIN IMMEDIATE")

    def _read(self) -> Txn:
        """One read snapshot (WAL readers see the database as of their first read)."""
        return Txn(self, "BEGIN")
