"""Knowledge: load knowledge/*.yaml once, validate it, and answer lookups (aliases, fuzzy names). Reads records only."""
