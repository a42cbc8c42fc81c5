"""PostgreSQL plumbing for the stores, used when `ADVISOR_DB` is a `postgresql://` URL (several replicas, one
database): one psycopg connection pool per URL and process, transactions that look to the shared store code like
the SQLite ones (`with self._write() as conn: conn.execute(sql, params)` with `?` placeholders), versioned schema
migrations, and URLs printed without their password.

Why the same shape as bot/store/db.py: the audit chain's rules, its queries, sessions and the inbox are written
once against that small `execute` surface; the PostgreSQL classes (pg_stores.py) override only what differs in
dialect (INSERT OR IGNORE, json_remove, rowid) and in locking (the chain-head row instead of BEGIN IMMEDIATE).
psycopg is imported lazily, so an SQLite install never loads it.
"""
from __future__ import annotations

import re
import threading
from contextlib import contextmanager
from typing import Any, Iterator, Self

from bot.store.faults import StorageError, StorageRefused
from bot.store.pg_schema import MIGRATIONS, MIGRATION_LOCK

__all__ = ["is_postgres_url", "redact_url", "PgDatabase", "PgError", "get_pool", "close_pools", "DatabaseUrl", "schema_status",
           "migrate"]

URL_PREFIXES = ("postgresql://", "postgres://")
POOL_MAX = 10                   # per process: the Slack app's workers and the edge share it
CONNECT_TIMEOUT_S = 10

# TCP keepalives on every pooled connection: a server that vanished without closing the socket (a partition, a
# host gone) is noticed in about 25 s instead of a worker waiting on it forever
CLIENT_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}

_POOLS: dict[str, Any] = {}
_MIGRATED: set[str] = set()
_POOLS_LOCK = threading.Lock()


class PgError(StorageError):
    """The PostgreSQL database cannot be reached or used: a StorageError, so every surface reports it the same way
    (the CLI's clear message and exit status, the Slack app's /readyz and apology)."""


def is_postgres_url(target: Any) -> bool:
    """True for `postgresql://...` / `postgres://...` (an ADVISOR_DB that names a server, not a file)."""
    return isinstance(target, str) and target.strip().lower().startswith(URL_PREFIXES)


_USERINFO_RE = re.compile(r"^(?P<scheme>[a-z]+://)(?P<user>[^:@/]*):[^@/]*@", re.IGNORECASE)
_QUERY_SECRET_RE = re.compile(r"(?P<key>[?&](?:password|sslpassword)=)[^&]*", re.IGNORECASE)


def redact_url(url: str) -> str:
    """The URL with any password replaced by `***`, for messages, logs and `doctor` (never print the secret)."""
    text = _USERINFO_RE.sub(lambda m: f"{m['scheme']}{m['user']}:***@", str(url).strip())
    return _QUERY_SECRET_RE.sub(lambda m: f"{m['key']}***", text)


class DatabaseUrl(str):
    """A database URL whose text is the redacted form and whose `.secret` is the real one.

    Why: the stores hand their `.path` to error messages and to siblings (`Inbox(log.path)`); as a DatabaseUrl it
    opens the same database but prints as `postgresql://user:***@host/db` wherever it is formatted by mistake.
    """

    secret: str

    def __new__(cls, url: str) -> Self:
        real = getattr(url, "secret", None) or str(url).strip()
        self = super().__new__(cls, redact_url(real))
        self.secret = real
        return self


# SQLSTATE class or code -> (what is wrong, how to fix it), for failures of a connected server
_REFUSALS = (
    ("25006", "is read-only (a standby, or default_transaction_read_only is on)",
     "point ADVISOR_DB at the primary server, or turn default_transaction_read_only off for this database"),
    ("53", "is out of resources (disk, memory or connections)",
     "free disk space or raise the server's limits (max_connections), then run `gpu-advisor doctor`"),
    ("57", "stopped the operation (shutdown, cancellation or a timeout)", "retry once the server is back"),
    ("40", "rolled the transaction back (a deadlock or serialisation conflict)", "retry the command"),
)


def _detail(url: str, exc: BaseException) -> str:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    secret = re.search(r":([^:@/]+)@", url)
    return detail.replace(secret.group(1), "***") if secret else detail


def _refused(url: str, exc: BaseException) -> PgError:
    """The PgError for a failure of the server itself: unreachable (SQLSTATE 08, or none) or one of _REFUSALS."""
    state = getattr(exc, "sqlstate", None) or ""
    for prefix, what, fix in _REFUSALS:
        if state.startswith(prefix):
            return PgError(f"the PostgreSQL database {redact_url(url)} {what} ({_detail(url, exc)})", fix=fix)
    return _unreachable(url, exc)


def _unreachable(url: str, exc: BaseException) -> PgError:
    detail = _detail(url, exc)
    return PgError(f"cannot connect to the PostgreSQL database {redact_url(url)} ({detail})",
                   fix="check that the server runs and accepts this user (psql with the same URL), or unset "
                       "ADVISOR_DB to use the local SQLite file")


RECONNECT_FIRST_S, RECONNECT_MAX_S = 0.25, 2.0     # the pool's reconnect backoff (psycopg_pool: 1 s doubling)


def _pool_class() -> type:
    """psycopg_pool's ConnectionPool whose lost connections are re-made every 0.25 s doubling to at most 2 s.

    Why: psycopg_pool waits 1, 2, 4, 8... s between attempts, so after a 15 s outage the pool stayed empty up to
    16 s more (measured: answers resumed 6 s after an 8 s outage ended); the cap makes it at most 2 s. Where a
    psycopg_pool release lacks the hook, the pool keeps its own schedule."""
    from psycopg_pool import ConnectionPool
    from psycopg_pool.base import AttemptWithBackoff

    class QuickAttempt(AttemptWithBackoff):
        INITIAL_DELAY = RECONNECT_FIRST_S

        def update_delay(self, now: float) -> None:
            super().update_delay(now)
            self.delay = min(self.delay, RECONNECT_MAX_S)

    class Pool(ConnectionPool):
        def _add_connection(self, attempt: Any = None, growing: bool = False) -> None:
            super()._add_connection(attempt or QuickAttempt(timeout=self.reconnect_timeout), growing)

    return Pool if hasattr(ConnectionPool, "_add_connection") else ConnectionPool


def get_pool(url: str) -> Any:
    """The process's pool for `url` (opened on first use; a server that does not answer is a PgError)."""
    import psycopg
    from psycopg_pool import ConnectionPool, PoolTimeout

    url = getattr(url, "secret", url)
    with _POOLS_LOCK:
        pool = _POOLS.get(url)
        if pool is None:
            try:                                     # one direct try first: it fails fast and names the cause
                psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S).close()
            except psycopg.Error as exc:
                raise _unreachable(url, exc) from None
            # check: a connection the server dropped (a restart, an outage) is found and replaced when it is taken
            # from the pool, not handed to a store to fail on; the pool reconnects in the background with backoff
            pool = _pool_class()(url, min_size=1, max_size=POOL_MAX, open=False, name="gpu-advisor",
                                  kwargs={"connect_timeout": CONNECT_TIMEOUT_S, **CLIENT_KEEPALIVES},
                                  timeout=CONNECT_TIMEOUT_S * 3,
                                  check=ConnectionPool.check_connection)
            try:
                pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
            except PoolTimeout as exc:
                pool.close()
                raise _unreachable(url, exc) from None
            _POOLS[url] = pool
        return pool


def close_pools() -> None:
    """Close every pool of this process (tests, and a clean shutdown)."""
    with _POOLS_LOCK:
        for pool in _POOLS.values():
            pool.close()
        _POOLS.clear()
        _MIGRATED.clear()


class QmarkConnection:
    """A psycopg connection that takes SQLite's `?` placeholders, so the shared store SQL runs unchanged."""

    def __init__(self, conn: Any):
        self.raw = conn

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s")

    def execute(self, sql: str, params: Any = ()) -> Any:
        params = tuple(params)
        if not params:
            return self.raw.execute(sql)
        return self.raw.execute(self._sql(sql), params)

    def executemany(self, sql: str, rows: Any) -> Any:
        cursor = self.raw.cursor()
        cursor.executemany(self._sql(sql), [tuple(r) for r in rows])
        return cursor


def _versions(conn: Any) -> set[int]:
    """Versions applied; the table is created only when missing (so a current, read-only database opens)."""
    if conn.execute("SELECT to_regclass('advisor_schema') IS NOT NULL").fetchone()[0]:
        return {row[0] for row in conn.execute("SELECT version FROM advisor_schema").fetchall()}
    conn.execute("CREATE TABLE IF NOT EXISTS advisor_schema (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                 "applied TIMESTAMPTZ NOT NULL DEFAULT now())")
    return {row[0] for row in conn.execute("SELECT version FROM advisor_schema").fetchall()}


def migrate(url: str) -> list[int]:
    """Apply the migrations this database lacks, in order, in one transaction; returns the versions applied.

    An advisory transaction lock serialises replicas starting together: the second waits, then finds nothing to do.
    """
    import psycopg
    try:
        return _migrate(url)
    except (psycopg.OperationalError, psycopg.InternalError) as exc:
        raise _refused(getattr(url, "secret", url), exc) from None


def _migrate(url: str) -> list[int]:
    with get_pool(url).connection() as conn:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        done = _versions(conn)
        applied = []
        for version, name, sql in MIGRATIONS:
            if version in done:
                continue
            conn.execute(sql)
            conn.execute("INSERT INTO advisor_schema (version, name) VALUES (%s, %s)", (version, name))
            applied.append(version)
    return applied


def schema_status(url: str) -> tuple[list[int], list[int]]:
    """(applied versions, pending versions) of the database at `url`, changing nothing (for `doctor`)."""
    with get_pool(url).connection() as conn:
        exists = conn.execute("SELECT to_regclass('advisor_schema') IS NOT NULL").fetchone()[0]
        done = {r[0] for r in conn.execute("SELECT version FROM advisor_schema").fetchall()} if exists else set()
    return sorted(done), [v for v, _, _ in MIGRATIONS if v not in done]


class PgDatabase:
    """Base of the PostgreSQL stores: `_write()` / `_read()` transactions on a pooled connection.

    Unlike SQLite's one locked connection, threads run in parallel on their own connections; what must be
    serialised (appends to the audit chain) takes a row lock inside the transaction (see PgAuditLog).
    """

    path: DatabaseUrl

    def _open(self, url: str, timeout: float | None = None) -> None:
        self.path = DatabaseUrl(url)         # opens siblings (inbox, Slack state) on one database; prints redacted
        url = self.path.secret
        self._pool = get_pool(url)
        with _POOLS_LOCK:
            fresh = url not in _MIGRATED
        if fresh:
            migrate(url)
            with _POOLS_LOCK:
                _MIGRATED.add(url)

    def close(self) -> None:
        """The pool is shared by the process's stores: closing one store leaves it open (close_pools ends it)."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self, timeout: float | None = None) -> Iterator[QmarkConnection]:
        """One transaction: COMMIT at the end of the block, ROLLBACK when it raises. `timeout`: the longest wait
        for a connection (the pool's 30 s when None) -- short where a caller must answer quickly (Slack's ack)."""
        with self._connection(timeout) as conn:
            yield QmarkConnection(conn)

    @contextmanager
    def _read(self, timeout: float | None = None) -> Iterator[QmarkConnection]:
        """One consistent snapshot (REPEATABLE READ, read only), as a WAL reader sees SQLite."""
        with self._connection(timeout) as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield QmarkConnection(conn)

    @contextmanager
    def _connection(self, timeout: float | None = None) -> Iterator[Any]:
        """A pooled connection in a transaction; a lost server or an exhausted pool becomes a PgError."""
        import psycopg
        from psycopg_pool import PoolTimeout
        try:
            with self._pool.connection(timeout=timeout) as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.InternalError, PoolTimeout) as exc:
            raise _refused(self.path.secret, exc) from None

    def integrity(self, limit: int = 5) -> list[str]:
        """[]: PostgreSQL checks its own pages (and checksums when the cluster has them); SQLite's
        integrity_check has no counterpart to run here."""
        return []

    def backup(self, target: Any) -> int:
        raise StorageRefused("`audit backup` copies an SQLite file; this log is in PostgreSQL",
                             fix="back it up with pg_dump (e.g. pg_dump -Fc -t advice -t audit_head DBNAME)")

    def checkpoint(self) -> tuple[int, int]:
        """(0, 0): there is no write-ahead log file of ours to fold; PostgreSQL checkpoints its own WAL."""
        return 0, 0

    def compact(self) -> bool:
        """True: deleted rows leave PostgreSQL's heap as autovacuum reclaims it (no file of ours to rewrite)."""
        return True
