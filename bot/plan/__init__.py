"""Plan: candidates for a job, the rule engine over them, ranking, and the checklist (OOM, topology, billing)."""
