"""`gpu-advisor doctor`: is this installation ready to run, and if not, what exactly to fix.

Checks, in order: the data folders, the knowledge base and rules (`kb validate`), the settings (every variable of
docs/operations.md: present where needed, well-formed), the database (its folder writable, WAL possible, not
locked, on a local filesystem), and the Slack settings with the mode `gpu-advisor serve` would use. Each line is
`ok`, `warn` or `fail`; warn and fail lines say how to fix it. Exit code 0 when nothing failed, 1 otherwise.

Offline: it calls no Slack API and changes nothing (the WAL test uses a scratch file beside the database that it
deletes). Token values are never printed: a token shows as its kind only, e.g. `xoxb-…(set)`.
"""
from __future__ import annotations

import os
import re
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generator, Iterator, TextIO
from urllib.parse import urlsplit

from bot.records import config
from bot.records.errors import AdvisorError
from bot.store.retention import table_report

# the same shapes `serve` enforces at start-up (one definition, in slack_settings)
from bot.surfaces.slack.settings import _APP_TOKEN as APP_TOKEN  # noqa: E402
from bot.surfaces.slack.settings import _BOT_TOKEN as BOT_TOKEN  # noqa: E402
from bot.surfaces.slack.settings import _SIGNING_SECRET as SIGNING_SECRET  # noqa: E402
from bot.surfaces.slack.settings import is_placeholder  # noqa: E402
from bot.surfaces.slack.settings import safe_url  # noqa: E402

_KNOWN_PREFIX = re.compile(r"^(xox[abposre]|xapp)-")
NETWORK_FS = {"nfs", "nfs4", "cifs", "smb3", "smbfs", "fuse.sshfs", "afs", "9p", "glusterfs", "ceph", "fuse.s3fs",
              "fuse.gcsfuse", "fuse.juicefs", "lustre"}
MIN_FREE_BYTES = 200 * 1024 * 1024


@dataclass
class Check:
    status: str                # ok | warn | fail
    area: str
    text: str
    fix: str = ""


def shown(value: str | None) -> str:
    """How a secret appears in the report: its kind, never its characters."""
    if value is None or not value.strip():
        return "(not set)"
    m = _KNOWN_PREFIX.match(value.strip())
    if m:
        return f"{m.group(1)}-…(set)"
    return f"(set, {len(value.strip())} characters)"


def _wrapped(value: str) -> str | None:
    """A common copy-paste slip: quotes or spaces around the value (EnvironmentFile and .env keep them)."""
    if value != value.strip():
        return "has spaces or a newline around it"
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return "is wrapped in quotes"
    return None


# ----- the checks ---------------------------------------------------------------------------------------------------
def check_paths() -> Iterator[Check]:
    for env, name, getter in (("ADVISOR_KNOWLEDGE_DIR", "knowledge", config.knowledge_dir),
                              ("ADVISOR_RULES_DIR", "rules", config.rules_dir)):
        try:
            path = getter()
        except AdvisorError as exc:
            yield Check("fail", "paths", f"{env}: {exc.message}", exc.fix or "")
            continue
        how = "from " + env if os.environ.get(env) else "default"
        yield Check("ok", "paths", f"{name}/ at {path} ({how})")
    prices = os.environ.get("ADVISOR_PRICES_FILE")
    if prices and not Path(prices).expanduser().is_file():
        yield Check("fail", "paths", f"ADVISOR_PRICES_FILE={prices} is not a file",
                    "point it at your prices YAML (docs/operations.md), or unset it")


def check_knowledge() -> tuple[list[Check], object | None]:
    from bot.plan.engine import check_rules
    from bot.knowledge.loader import check_knowledge as check_kb
    from bot.render.templates import default_templates
    out: list[Check] = []
    try:
        kdir, rdir = config.knowledge_dir(), config.rules_dir()
        kb, problems = check_kb(kdir, config.local_prices_file())
    except AdvisorError as exc:
        return [Check("fail", "knowledge", exc.message, exc.fix or "")], None
    if problems:
        head = "; ".join(str(p) for p in problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5
                                                         else "")
        out.append(Check("fail", "knowledge", f"{len(problems)} problem(s) in {kdir}: {head}",
                         "correct the files named, then run `gpu-advisor kb validate`"))
    else:
        out.append(Check("ok", "knowledge", f"{len(kb.flavors)} flavors, {len(kb.gpus)} GPUs, {len(kb.models)} "
                                             f"models, {len(kb.sources)} sources; version {kb.version}"))
    try:
        rs, rproblems = check_rules(rdir, set(kb.sources) if kb else None, default_templates().keys)
    except Exception as exc:                  # noqa: BLE001 - a rules folder that cannot even be read
        return out + [Check("fail", "rules", f"cannot read {rdir}: {exc}", "check ADVISOR_RULES_DIR")], kb
    if rproblems:
        head = "; ".join(str(p) for p in rproblems[:5])
        out.append(Check("fail", "rules", f"{len(rproblems)} problem(s) in {rdir}: {head}",
                         "correct the files named, then run `gpu-advisor kb validate`"))
    elif rs is not None:
        out.append(Check("ok", "rules", f"{len(rs.rules)} rules; version {rs.version}"))
    return out, kb


def check_settings(kb) -> Iterator[Check]:
    from bot.surfaces.logs import FORMATS, LEVELS
    try:
        cmd = config.slash_command()
        yield Check("ok", "settings", f"ADVISOR_SLASH_COMMAND {cmd}")
    except AdvisorError as exc:
        yield Check("fail", "settings", exc.message, exc.fix or "")
    provider = config.default_provider()
    if kb is not None:
        if provider in kb.providers:
            yield Check("ok", "settings", f"ADVISOR_DEFAULT_PROVIDER {provider}")
        else:
            from bot.knowledge.loader import did_you_mean
            guess = did_you_mean(provider, kb.providers)
            yield Check("fail", "settings", f"ADVISOR_DEFAULT_PROVIDER={provider!r} is not a provider in the "
                                            "knowledge base",
                        (f"did you mean {guess[0]}? " if guess else "") + "use one of "
                        + ", ".join(sorted(kb.providers)))
    for env, allowed, default in (("ADVISOR_LOG_FORMAT", FORMATS, "text"), ("ADVISOR_LOG_LEVEL", LEVELS, "INFO")):
        raw = (os.environ.get(env) or "").strip()
        value = raw.upper() if env.endswith("LEVEL") else raw.lower()
        if raw and value not in allowed:
            yield Check("fail", "settings", f"{env}={raw!r} is not one of {', '.join(allowed)}",
                        f"set {env} to one of {', '.join(allowed)}, or unset it (default {default})")
        else:
            yield Check("ok", "settings", f"{env} {value or default}" + ("" if raw else " (default)"))
    port = os.environ.get("PORT")
    if port is not None and not (port.strip().isdigit() and 1 <= int(port) <= 65535):
        yield Check("fail", "settings", f"PORT={port!r} is not a TCP port", "set PORT to a number 1-65535")
    from bot.knowledge.loader import yaml_cache_dir
    cache = yaml_cache_dir()
    if cache is None:
        yield Check("ok", "settings", "ADVISOR_CACHE_DIR off: the YAML files are parsed at every start (~0.1 s)")
    elif not _writable_dir(cache):
        yield Check("warn", "settings", f"parse cache {cache} is not writable: every start parses the YAML again",
                    "set ADVISOR_CACHE_DIR to a writable folder, or to 'off'")
    else:
        yield Check("ok", "settings", f"parse cache {cache}")


def _writable_dir(path: Path) -> bool:
    probe = path
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    return probe.is_dir() and os.access(probe, os.W_OK | os.X_OK)


def _mount_fstype(path: Path) -> str | None:
    """The filesystem type holding `path`, from /proc/mounts (Linux); None elsewhere."""
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return None
    best, fstype = "", None
    target = str(path.resolve())
    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            continue
        mnt = parts[1].replace("\\040", " ")
        if (target == mnt or target.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
            best, fstype = mnt, parts[2]
    return fstype


def check_database() -> Iterator[Check]:
    """The database ADVISOR_DB names: PostgreSQL (doctor_pg), or an SQLite file, its folder and filesystem."""
    try:
        target = config.db_target()
        if isinstance(target, str):        # a postgresql:// URL (bot/surfaces/doctor_pg.py)
            from bot.surfaces.doctor_pg import check_postgres
            yield from check_postgres(target, Check, table_check)
            return
        path = config.db_path()            # creates the folder when it can
    except AdvisorError as exc:
        yield Check("fail", "database", exc.message, exc.fix or "")
        return
    folder = path.parent
    how = "ADVISOR_DB" if os.environ.get("ADVISOR_DB") else "default"
    if (yield from _folder_checks(folder, path)):
        return
    yield from _space_checks(folder)
    yield from _file_checks(path, how)


def _folder_checks(folder: Path, path: Path) -> Generator[Check, None, bool]:
    """The folder is writable and SQLite's WAL works there (proved on a scratch file); True: stop here."""
    if not os.access(folder, os.W_OK | os.X_OK):
        yield Check("fail", "database", f"{folder} is not writable (the database {path.name} and its -wal/-shm "
                                        "files live there)",
                    f"make {folder} writable by user {_user()}, or set ADVISOR_DB to a file in a writable folder")
        return True
    # WAL needs a filesystem with working locks and shared memory: prove it on a scratch file beside the database.
    scratch = folder / f".gpu-advisor-doctor-{os.getpid()}.db"
    try:
        conn = sqlite3.connect(str(scratch), timeout=2)
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            conn.execute("CREATE TABLE t (x)")
            conn.execute("INSERT INTO t VALUES (1)")
            conn.commit()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        yield Check("fail", "database", f"cannot write an SQLite file in {folder}: {exc}",
                    "put ADVISOR_DB on a local, writable filesystem")
        return True
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(scratch) + suffix).unlink(missing_ok=True)
    if str(mode).lower() != "wal":
        yield Check("fail", "database", f"SQLite cannot use WAL mode in {folder} (got {mode!r})",
                    "put ADVISOR_DB on a local filesystem (not NFS/SMB, not a FUSE mount)")
    return False


def _space_checks(folder: Path) -> Iterator[Check]:
    """A network filesystem or a nearly full disk: warnings, the database may still work."""
    fstype = _mount_fstype(folder)
    if fstype in NETWORK_FS:
        yield Check("warn", "database", f"{folder} is on a network filesystem ({fstype}); SQLite's WAL locking "
                                        "is unreliable there",
                    "use a local disk or a block volume (ReadWriteOnce PVC) for ADVISOR_DB")
    try:
        st = os.statvfs(folder)
        free = st.f_bavail * st.f_frsize
        if free < MIN_FREE_BYTES:
            yield Check("warn", "database", f"only {free / 2**20:.0f} MiB free on the database's filesystem",
                        "free space or move ADVISOR_DB; the audit log only grows (see `audit prune`)")
    except (OSError, AttributeError):
        pass


def _file_checks(path: Path, how: str) -> Iterator[Check]:
    """An existing file: readable, writable, lockable, an SQLite database that passes its integrity check."""
    if not path.exists():
        yield Check("ok", "database", f"{path} ({how}) will be created on first use; WAL mode works there")
        return
    if not os.access(path, os.R_OK | os.W_OK):
        yield Check("fail", "database", f"{path} exists but is not readable and writable by user {_user()}",
                    f"chown/chmod {path} (and its -wal/-shm files) for the user the bot runs as")
        return
    try:
        conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=2)
        try:
            journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
            conn.execute("BEGIN IMMEDIATE")   # can we take the write lock? (nothing is written)
            conn.rollback()
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            rows = conn.execute("SELECT COUNT(*) FROM advice").fetchone()[0] if "advice" in tables else 0
            sizes = table_report(conn, sorted(tables))
            damage = [r[0] for r in conn.execute("PRAGMA integrity_check(5)")]   # reads every page
        finally:
            conn.close()
        if damage != ["ok"]:
            yield Check("fail", "database", f"{path} is damaged: SQLite's integrity check says "
                                            f"{'; '.join(map(str, damage))[:300]}",
                        "restore the latest `gpu-advisor audit backup` copy (move the damaged file aside first), "
                        "or export what still reads with `gpu-advisor audit export`")
            return
    except sqlite3.OperationalError as exc:
        text = str(exc)
        if "locked" in text or "busy" in text:
            yield Check("warn", "database", f"{path}: the write lock is held by another process right now",
                        "if this lasts, find the process holding it (`fuser` / `lsof`) and stop it")
        else:
            yield Check("fail", "database", f"{path}: {text}", "check the file is an SQLite database, or move it "
                                                              "away to start a new one")
        return
    except sqlite3.DatabaseError as exc:
        yield Check("fail", "database", f"{path} is not a readable SQLite database ({exc})",
                    "restore it from a backup (docs/operations.md), or move it away to start a new one")
        return
    size = path.stat().st_size / 2**20
    yield Check("ok", "database", f"{path} ({how}): writable, journal {journal}, {rows} audit records, "
                                  f"{size:.1f} MiB")
    yield table_check(sizes)


def table_check(sizes: list) -> Check:
    """One line: each table's rows and the date of its oldest row (what retention is keeping)."""
    parts = [f"{t.table} {t.rows:,}" + (f" (oldest {t.oldest[:10]})" if t.oldest else "") for t in sizes]
    return Check("ok", "tables", "; ".join(parts) if parts else "no tables yet")


def check_slack() -> Iterator[Check]:
    """The Slack settings for the mode `serve` would use, then the same validation `serve` runs."""
    env = os.environ
    bot, secret, app = (env.get(n) for n in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"))
    client_id, client_secret = env.get("SLACK_CLIENT_ID"), env.get("SLACK_CLIENT_SECRET")
    oauth = any(v and v.strip() for v in (client_id, client_secret))
    if not any(v and v.strip() for v in (bot, secret, app)) and not oauth:
        yield Check("warn", "slack", "no Slack settings: the CLI works, `gpu-advisor serve` will not start",
                    "set SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (HTTP mode) or SLACK_APP_TOKEN (Socket Mode); "
                    "see docs/operations.md")
        return
    mode = "socket" if app and app.strip() else "http"
    port = env.get("PORT") or "3000"
    yield Check("ok", "slack", "serve would use Socket Mode (SLACK_APP_TOKEN is set)" if mode == "socket" else
                f"serve would use HTTP mode: POST /slack/events and GET /healthz on port {port} "
                "(SLACK_APP_TOKEN not set)")
    checks: list[Check] = []
    for name, value, pattern, need, what, where in (
            ("SLACK_BOT_TOKEN", bot, BOT_TOKEN, not oauth, "a bot token (xoxb-…)",
             "OAuth & Permissions > Bot User OAuth Token"),
            ("SLACK_SIGNING_SECRET", secret, SIGNING_SECRET, mode == "http", "32 hexadecimal characters",
             "Basic Information > App Credentials > Signing Secret"),
            ("SLACK_APP_TOKEN", app, APP_TOKEN, mode == "socket", "an app-level token (xapp-…)",
             "Basic Information > App-Level Tokens (scope connections:write)")):
        checks += _token_checks(name, value, pattern, need, what, where, mode)
    checks += _base_url_checks((env.get("SLACK_API_BASE_URL") or "").strip())
    if oauth:
        checks += _oauth_checks(client_id, client_secret, mode)
    yield from checks
    failed = any(c.status == "fail" for c in checks)
    if not failed:
        # the same validation `serve` runs, so the two cannot disagree
        try:
            from bot.surfaces.slack.settings import SlackSettings
        except ImportError:
            return
        try:
            SlackSettings.from_env(mode)
        except AdvisorError as exc:
            yield Check("fail", "slack", f"serve would refuse to start: {exc.message}", exc.fix or "")


def _token_checks(name: str, value: str | None, pattern, need: bool, what: str, where: str, mode: str
                  ) -> list[Check]:
    """One Slack credential: set where the mode needs it, not wrapped in quotes, not the example's placeholder,
    well-formed (and, when it is another kind of token, which one it is)."""
    if value is None or not value.strip():
        if need:
            return [Check("fail", "slack", f"{name} (not set), needed in {mode} mode", f"copy it from {where}")]
        if name == "SLACK_SIGNING_SECRET":
            return [Check("ok", "slack", f"{name} (not set; Socket Mode does not need it)")]
        return []
    slip = _wrapped(value)
    if slip:
        return [Check("fail", "slack", f"{name} {shown(value)} {slip}",
                      "remove the quotes/spaces: systemd EnvironmentFile, docker --env-file and Kubernetes "
                      "Secrets keep them as part of the value")]
    if pattern.match(value) and is_placeholder(value):
        return [Check("fail", "slack", f"{name} {shown(value)} is the placeholder of deploy/slack.env.example",
                      f"replace it by the real value from {where}")]
    if pattern.match(value):
        return [Check("ok", "slack", f"{name} {shown(value)}, well-formed")]
    kind = _KNOWN_PREFIX.match(value)
    hint = ""
    if kind and kind.group(1) == "xapp" and name == "SLACK_BOT_TOKEN":
        hint = "this is an app-level token: put it in SLACK_APP_TOKEN and the xoxb- token here; "
    elif kind and kind.group(1) == "xoxb" and name == "SLACK_APP_TOKEN":
        hint = "this is the bot token: put it in SLACK_BOT_TOKEN and the xapp- token here; "
    elif kind and kind.group(1) == "xoxp":
        hint = "this is a user token, the bot needs its bot token; "
    shape = "is too short to be" if kind and value.startswith(what.split("(")[-1].rstrip(")…")) else "is not"
    return [Check("fail", "slack", f"{name} {shown(value)} {shape} {what}", f"{hint}copy it from {where}")]


def _oauth_checks(client_id: str | None, client_secret: str | None, mode: str) -> list[Check]:
    """Many workspaces: the client id and secret, ADVISOR_TOKEN_KEY, and whether it opens the stored tokens."""
    from bot.surfaces.slack.settings import _CLIENT_ID, _CLIENT_SECRET
    out = [Check("ok", "slack", "SLACK_CLIENT_ID/SECRET set: installs in many workspaces through /slack/install "
                                "(each answered with its own token; SLACK_BOT_TOKEN not needed)")]
    cid = (client_id or "").strip()
    if not cid:
        out.append(Check("fail", "slack", "SLACK_CLIENT_ID (not set), needed with SLACK_CLIENT_SECRET",
                         "copy it from Basic Information > App Credentials > Client ID"))
    elif not _CLIENT_ID.match(cid):
        out.append(Check("fail", "slack", "SLACK_CLIENT_ID is not two numbers joined by a dot",
                         "copy it from Basic Information > App Credentials > Client ID"))
    else:
        out.append(Check("ok", "slack", f"SLACK_CLIENT_ID {cid}"))
    out += _token_checks("SLACK_CLIENT_SECRET", client_secret, _CLIENT_SECRET, True, "32 hexadecimal characters",
                         "Basic Information > App Credentials > Client Secret", mode)
    return out + _token_key_checks()


def _token_key_checks() -> list[Check]:
    """ADVISOR_TOKEN_KEY well-formed, and every stored token row opens with it (read-only: nothing migrated)."""
    from bot.store.installations import read_sealed
    from bot.store.tokens import TokenCipher
    try:
        cipher = TokenCipher.from_env()
    except AdvisorError as exc:
        return [Check("fail", "slack", exc.message, exc.fix or "")]
    lines = [Check("ok", "slack", f"ADVISOR_TOKEN_KEY {cipher.count} key(s), well-formed (the first seals new tokens)")]
    try:
        sealed = read_sealed(config.db_target())
        for text in sealed or []:
            cipher.decrypt(text)
    except AdvisorError as exc:
        return lines + [Check("fail", "slack", exc.message, exc.fix or "")]
    except Exception as exc:                   # noqa: BLE001 - the database check above says what is wrong with it
        return lines + [Check("warn", "slack", f"stored tokens not checked: {type(exc).__name__}",
                              "see the database lines above")]
    if sealed:
        lines.append(Check("ok", "slack", f"{len(sealed)} stored token row(s) open with ADVISOR_TOKEN_KEY"))
    else:
        lines.append(Check("ok", "slack", "no workspace installed yet: open /slack/install on the public URL"))
    return lines


def _base_url_checks(base: str) -> list[Check]:
    """SLACK_API_BASE_URL is for a stand-in server in tests: an http(s) URL, and Slack's own in production."""
    if not base:
        return []
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return [Check("fail", "slack", f"SLACK_API_BASE_URL={safe_url(base)!r} is not an http(s) URL",
                      "unset it (default https://slack.com/api/); it is for a stand-in server in tests")]
    if parts.hostname not in ("slack.com", "127.0.0.1", "localhost", "::1"):
        return [Check("warn", "slack", f"SLACK_API_BASE_URL points at {parts.hostname}, not Slack",
                      "unset it in production (default https://slack.com/api/)")]
    return [Check("ok", "slack", f"SLACK_API_BASE_URL {safe_url(base)}")]


def _user() -> str:
    try:
        import getpass
        return getpass.getuser()
    except Exception:                          # noqa: BLE001 - no passwd entry in some containers
        return str(os.getuid()) if hasattr(os, "getuid") else "?"


# ----- the report ---------------------------------------------------------------------------------------------------
def collect() -> list[Check]:
    checks = list(check_paths())
    kchecks, kb = check_knowledge()
    checks += kchecks
    checks += list(check_settings(kb))
    checks += list(check_database())
    checks += list(check_slack())
    return checks


def run_doctor(out: TextIO | None = None, collect_checks: Callable[[], list[Check]] = collect,
               as_json: bool = False) -> int:
    """Print one line per check (and the fix under warn/fail lines), or one JSON object with --json;
    0 when nothing failed, else 1."""
    out = out or sys.stdout
    try:
        from importlib.metadata import version
        ver = version("gpu-advisor")
    except Exception:                          # noqa: BLE001 - running from a checkout that is not installed
        ver = "(not installed, from source)"
    if as_json:
        import json
        checks = collect_checks()
        fails = sum(c.status == "fail" for c in checks)
        print(json.dumps({"ok": not fails, "version": ver, "python": sys.version.split()[0],
                          "problems": fails, "warnings": sum(c.status == "warn" for c in checks),
                          "checks": [{"status": c.status, "area": c.area, "text": c.text, "fix": c.fix or None}
                                     for c in checks]}, ensure_ascii=False), file=out)
        return 1 if fails else 0
    print(f"gpu-advisor {ver}, Python {sys.version.split()[0]} ({sys.executable})", file=out)
    checks = collect_checks()
    for c in checks:
        print(f"{c.status:<5} {c.area:<10} {c.text}", file=out)
        if c.fix and c.status != "ok":
            print(f"{'':<16} fix: {c.fix}", file=out)
    fails = sum(c.status == "fail" for c in checks)
    warns = sum(c.status == "warn" for c in checks)
    if fails:
        print(f"{fails} problem(s), {warns} warning(s): fix the fail lines above, then run `gpu-advisor doctor` "
              "again.", file=out)
    else:
        print(f"ready: no problems, {warns} warning(s).", file=out)
    return 1 if fails else 0
