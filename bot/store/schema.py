"""The schema of the audit tables (`advice`, `slack_events`, the prune lock, the append-only triggers and the
`advice_readable` view), and the splitter that runs it statement by statement."""
from __future__ import annotations

import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS advice (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
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
CREATE INDEX IF NOT EXISTS advice_ts ON advice(ts);
CREATE INDEX IF NOT EXISTS advice_user ON advice("user", ts);
CREATE INDEX IF NOT EXISTS advice_session ON advice(session, ts);
CREATE TABLE IF NOT EXISTS slack_events (
    event_id TEXT PRIMARY KEY,
    ts TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_prune_lock (
    token TEXT PRIMARY KEY
);
CREATE TRIGGER IF NOT EXISTS advice_no_update BEFORE UPDATE ON advice
BEGIN
    SELECT RAISE(ABORT, 'advice rows are append-only');
END;
CREATE TRIGGER IF NOT EXISTS advice_no_delete BEFORE DELETE ON advice
WHEN NOT EXISTS (SELECT 1 FROM audit_prune_lock)
BEGIN
    SELECT RAISE(ABORT, 'advice rows are append-only: use `gpu-advisor audit prune --before DATE`');
END;
CREATE VIEW IF NOT EXISTS advice_readable AS
SELECT
    seq,
    id,
    ts,
    surface,
    "user",
    channel,
    session,
    status,
    intent,
    question,
    json_extract(recommendations, '$[0].provider') AS top_provider,
    json_extract(recommendations, '$[0].flavor') AS top_flavor,
    json_extract(recommendations, '$[0].gpu') AS top_gpu,
    json_extract(recommendations, '$[0].gpu_count') AS top_gpu_count,
    json_extract(recommendations, '$[0].instances') AS top_instances,
    json_extract(recommendations, '$[0].price_per_hour') AS top_price_per_hour,
    json_extract(recommendations, '$[0].currency') AS top_currency,
    json_extract(reply, '$.memory.per_gpu_gib') AS per_gpu_gib,
    json_array_length(recommendations) AS n_recommendations,
    kb_version,
    hash
FROM advice;
"""


def statements(script: str) -> list[str]:
    """Split the schema script into statements (triggers contain ';' inside BEGIN...END)."""
    out, buf = [], []
    for line in script.strip().splitlines():
        buf.append(line)
        joined = "\n".join(buf).strip()
        if joined.endswith(";") and sqlite3.complete_statement(joined):
            out.append(joined)
            buf = []
    if "\n".join(buf).strip():
        out.append("\n".join(buf).strip())
    return out
