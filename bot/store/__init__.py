"""Store: SQLite sessions, the append-only hash-chained audit log, and the connection plumbing under both."""
