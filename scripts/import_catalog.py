#!/usr/bin/env python3
"""Regenerate knowledge/flavors/<provider>.yaml from data/catalog/*.csv (see bot/knowledge/catalog.py).

Run from the repository root: python scripts/import_catalog.py [--catalog-dir data/catalog] [--out knowledge].
`gpu-advisor kb update-prices PATH_OR_DIR` does the same for a newer catalog and reports what changed.
"""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bot.knowledge.catalog import *  # noqa: E402,F401,F403  (the importer's names, for tests that load this file)
from bot.knowledge.catalog import ImportError_, import_provider, main  # noqa: E402,F401

if __name__ == "__main__":
    raise SystemExit(main())
