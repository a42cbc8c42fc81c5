"""The PostgreSQL schema as numbered migrations (table `advisor_schema` records which ran): the same tables and
columns as the SQLite schema (bot/store/migrations.py), so rows copy across
unchanged and the chain hashes the same text.

What differs, and why:
- `audit_head`: one row holding the chain head (last seq issued, its hash). Every audit write locks it
  (`SELECT ... FOR UPDATE`), so appends from several replicas are serialised and never fork the chain; its seq
  is also the high-water mark that SQLite keeps in sqlite_sequence (a deleted tail is still detected).
- The append-only rule is one plpgsql trigger; `audit prune` passes it by holding a row in audit_prune_lock
  inside its own transaction, exactly as on SQLite (other transactions never see that row).
- JSON columns stay TEXT: the stored text is what was hashed and what an export writes.
Never edit a migration that has shipped: add the next number.
"""
from __future__ import annotations

MIGRATION_LOCK = 0x67707561647673     # pg_advisory_xact_lock key for migrations ("gpuadvs")

_V1_AUDIT = """
CREATE TABLE advice (
    seq BIGINT PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    ts TEXT NOT NULL,
    surface TEXT NOT NULL,
    team TEXT,
    channel TEXT,
    "user" TEXT,
    session TEXT,
    question TEXT,
    status TEXT NOT NULL,
    intent TEXT,
    slots TEXT,
    recommendations TEXT,
    rule_trace TEXT,
    kb_version TEXT,
    reply TEXT,
    event_id TEXT UNIQUE,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX advice_ts ON advice(ts);
CREATE INDEX advice_user ON advice("user", ts);
CREATE INDEX advice_session ON advice(session, ts);
CREATE INDEX advice_team ON advice(team, ts);
CREATE TABLE audit_head (
    one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    seq BIGINT NOT NULL,
    hash TEXT NOT NULL
);
INSERT INTO audit_head (one, seq, hash) VALUES (TRUE, 0, repeat('0', 64));
CREATE TABLE slack_events (
    event_id TEXT PRIMARY KEY,
    ts TEXT NOT NULL
);
CREATE TABLE audit_prune_lock (
    token TEXT PRIMARY KEY
);
CREATE FUNCTION advice_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND EXISTS (SELECT 1 FROM audit_prune_lock) THEN
        RETURN OLD;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'advice rows are append-only: use `gpu-advisor audit prune --before DATE`';
    END IF;
    RAISE EXCEPTION 'advice rows are append-only';
END $$;
CREATE TRIGGER advice_append_only BEFORE UPDATE OR DELETE ON advice
    FOR EACH ROW EXECUTE FUNCTION advice_append_only();
CREATE VIEW advice_readable AS
SELECT seq, id, ts, surface, "user", channel, session, status, intent, question,
    recommendations::jsonb -> 0 ->> 'provider' AS top_provider,
    recommendations::jsonb -> 0 ->> 'flavor' AS top_flavor,
    recommendations::jsonb -> 0 ->> 'gpu' AS top_gpu,
    recommendations::jsonb -> 0 ->> 'gpu_count' AS top_gpu_count,
    recommendations::jsonb -> 0 ->> 'instances' AS top_instances,
    recommendations::jsonb -> 0 ->> 'price_per_hour' AS top_price_per_hour,
    recommendations::jsonb -> 0 ->> 'currency' AS top_currency,
    reply::jsonb -> 'memory' ->> 'per_gpu_gib' AS per_gpu_gib,
    CASE WHEN jsonb_typeof(recommendations::jsonb) = 'array'
         THEN jsonb_array_length(recommendations::jsonb) END AS n_recommendations,
    kb_version, hash
FROM advice;
CREATE TABLE sessions (
    key TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    updated TEXT NOT NULL,
    expires TEXT NOT NULL
);
CREATE INDEX sessions_expires ON sessions(expires);
"""

_V2_INBOX = """
CREATE TABLE inbox (
    n BIGSERIAL UNIQUE,
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    received TEXT NOT NULL,
    updated TEXT NOT NULL,
    advice_id TEXT,
    delivered INTEGER,
    parts_posted INTEGER NOT NULL DEFAULT 0,
    error TEXT
);
CREATE INDEX inbox_state ON inbox(state, received);
CREATE INDEX inbox_advice ON inbox(advice_id);
"""

_V3_SLACK_STATE = """
CREATE TABLE feedback (
    advice_id TEXT NOT NULL,
    "user" TEXT NOT NULL,
    team TEXT,
    helpful INTEGER,
    ts TEXT,
    PRIMARY KEY (advice_id, "user")
);
CREATE TABLE slack_prefs (
    team TEXT NOT NULL,
    "user" TEXT NOT NULL,
    provider TEXT,
    currency TEXT,
    ts TEXT,
    PRIMARY KEY (team, "user")
);
CREATE TABLE slack_threads (
    channel TEXT NOT NULL,
    thread_ts TEXT NOT NULL,
    ts TEXT,
    PRIMARY KEY (channel, thread_ts)
);
"""

_V4_INBOX_OWNER = """
ALTER TABLE inbox ADD COLUMN owner BIGINT;
"""

_V7_INBOX_TEAM = """
ALTER TABLE inbox ADD COLUMN team TEXT;
UPDATE inbox SET team = payload::jsonb ->> 'team';
CREATE INDEX inbox_team ON inbox(team, received);
"""


_V5_INSTALLATIONS = """
CREATE TABLE IF NOT EXISTS slack_installations (enterprise_id TEXT NOT NULL, team_id TEXT NOT NULL, user_id TEXT NOT NULL,
    installed_at DOUBLE PRECISION NOT NULL, data TEXT NOT NULL, secrets TEXT NOT NULL,
    PRIMARY KEY (enterprise_id, team_id, user_id));
CREATE TABLE IF NOT EXISTS slack_bots (enterprise_id TEXT NOT NULL, team_id TEXT NOT NULL,
    installed_at DOUBLE PRECISION NOT NULL, data TEXT NOT NULL, secrets TEXT NOT NULL,
    PRIMARY KEY (enterprise_id, team_id));
CREATE TABLE IF NOT EXISTS slack_oauth_states (state TEXT PRIMARY KEY, expire_at DOUBLE PRECISION NOT NULL);
"""

_V6_TEAM_SETTINGS = """
CREATE TABLE IF NOT EXISTS team_settings (team TEXT PRIMARY KEY, provider TEXT, currency TEXT,
    retention_days INTEGER, updated TEXT NOT NULL, updated_by TEXT);
"""


# (version, name, SQL): applied in order, each once, in one transaction per start (bot/store/pg.py: migrate)
MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "audit log, chain head, event claims, sessions", _V1_AUDIT),
    (2, "durable Slack inbox", _V2_INBOX),
    (3, "Slack feedback, preferences and threads", _V3_SLACK_STATE),
    (4, "inbox jobs record the replica running them", _V4_INBOX_OWNER),
    (5, "Slack installations, bots and OAuth states (many workspaces)", _V5_INSTALLATIONS),
    (6, "per-team settings: default cloud, currency, retention", _V6_TEAM_SETTINGS),
    (7, "the inbox job's team (per-workspace retention of the inbox)", _V7_INBOX_TEAM),
    (8, "the inbox job's not-before time (Slack's rate limits)", "ALTER TABLE inbox ADD COLUMN not_before TEXT;"),
]
