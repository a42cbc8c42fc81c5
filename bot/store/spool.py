"""A local, durable waiting room for Slack jobs the database cannot take right now (PostgreSQL down, SQLite locked
out): one small JSON file per job in a private folder, written and fsynced before the request is acknowledged,
moved into the inbox when the database is back, then deleted.

Why: Slack does not resend an acknowledged event, and it never resends a slash command. Before, a 15 s PostgreSQL
outage left 6 of 44 acknowledged DMs with only a "could not be recorded" apology although they could have been
answered a few seconds later. A file on the local disk is the one store that does not depend on the database; the
inbox's own dedupe keys (slack_events) make moving a job in twice harmless, so a crash between "recorded in the
inbox" and "file deleted" answers nothing twice.

A file is written to `NAME.tmp`, fsynced, renamed to `NAME.json` and the folder fsynced, so a crash leaves either
no job or a whole one. Names start with the time in nanoseconds: `pending()` is oldest first. Pure: the standard
library only.
"""
from __future__ import annotations

import json
import os
import pathlib
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterable

__all__ = ["Spool", "Spooled"]


@dataclass(frozen=True)
class Spooled:
    """One waiting job as written: what `Inbox.put` takes, and the file that holds it."""
    path: pathlib.Path
    job_id: str
    kind: str
    payload: dict[str, Any]
    keys: tuple[str, ...]


class Spool:
    """Jobs waiting for the database, in `folder` (created 0700; files 0600: they hold users' questions)."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = pathlib.Path(folder)

    def put(self, job_id: str, kind: str, payload: dict[str, Any], keys: Iterable[str] = ()) -> pathlib.Path:
        """Write one job durably; OSError (disk full, read-only) when it cannot be kept: then nothing is kept."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        record = {"id": job_id, "kind": kind, "payload": payload, "keys": list(keys)}
        data = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:12]}"
        tmp, final = self.folder / f"{name}.tmp", self.folder / f"{name}.json"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, final)
            _fsync_dir(self.folder)
        except OSError:
            tmp.unlink(missing_ok=True)
            final.unlink(missing_ok=True)
            raise
        return final

    def pending(self) -> list[Spooled]:
        """The jobs waiting, oldest first (a file that cannot be read as a job is set aside as `.bad`)."""
        try:
            names = sorted(p for p in self.folder.iterdir() if p.suffix == ".json")
        except OSError:                              # no folder yet (nothing was kept), or not one at all
            return []
        out = []
        for path in names:
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
                out.append(Spooled(path, str(record["id"]), str(record["kind"]), dict(record["payload"]),
                                   tuple(record.get("keys") or ())))
            except FileNotFoundError:              # drained meanwhile by another process on this host
                continue
            except (ValueError, KeyError, TypeError, OSError):
                path.replace(path.with_suffix(".bad"))
        return out

    def count(self) -> int:
        try:
            return sum(1 for p in self.folder.iterdir() if p.suffix == ".json")
        except OSError:
            return 0

    def drain(self, put: Callable[[str, str, dict[str, Any], tuple[str, ...]], bool],
              queued: Callable[[str], None]) -> int:
        """Move every waiting job into the inbox (`put`, which raises while the database is still away: then the
        rest stay here), call `queued(job_id)` for each one that was new, delete each file once recorded.
        Returns how many files were moved (new or duplicates)."""
        moved = 0
        for job in self.pending():
            if put(job.job_id, job.kind, job.payload, job.keys):
                queued(job.job_id)
            job.path.unlink(missing_ok=True)
            moved += 1
        return moved


def _fsync_dir(folder: pathlib.Path) -> None:
    """Make the rename itself durable (POSIX: the directory entry lives in the folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:                                  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
