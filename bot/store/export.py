"""Export files of the audit log (`audit export`, `audit import`, `audit verify --file`): CSV and JSON lines,
every column in chain order, read back row for row so the chain can be verified outside the database."""
from __future__ import annotations

import csv
import io
import json
import os
import pathlib
from typing import Any, Iterable, TextIO

from bot.store.chain import COLUMNS, JSON_FIELDS, AuditError, encode_json

def _csv_cell(name: str, value: Any) -> Any:
    if name in JSON_FIELDS:
        return "" if value is None else encode_json(value)
    return "" if value is None else value


def read_export(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Rows of an `audit export` file (jsonl or csv, told apart by extension or first character)."""
    path = pathlib.Path(path)
    with open(path, encoding="utf-8", newline="") as handle:   # newline="": a \r inside a CSV cell stays a \r
        text = handle.read()
    fmt = "csv" if path.suffix.lower() == ".csv" else "jsonl" if path.suffix.lower() in (".jsonl", ".ndjson", ".json") \
        else ("jsonl" if text.lstrip().startswith("{") else "csv")
    rows: list[dict[str, Any]] = []
    if fmt == "jsonl":
        for number, line in enumerate(text.split("\n"), 1):   # not splitlines(): U+2028, \x85... stay in a row
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise AuditError(f"{path}:{number}: not a JSON object ({exc.msg})",
                                 fix="pass a file written by `gpu-advisor audit export --format jsonl`") from exc
            rows.append({name: obj.get(name) for name in COLUMNS})
        return rows
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise AuditError(f"{path}: CSV header lacks {', '.join(missing)}",
                         fix="pass a file written by `gpu-advisor audit export --format csv`")
    for row in reader:
        out: dict[str, Any] = {}
        for name in COLUMNS:
            cell = row.get(name)
            if name == "seq":
                out[name] = int(cell)
            elif name in JSON_FIELDS:
                out[name] = json.loads(cell) if cell else None
            else:
                out[name] = cell if cell != "" else None
        rows.append(out)
    return rows



def write_export(rows: Iterable[dict[str, Any]], fmt: str, out: TextIO) -> int:
    """Write decoded rows (chain order, all columns) as jsonl or csv; returns the number of rows."""
    if fmt not in ("jsonl", "csv"):
        raise AuditError(f"unknown export format {fmt!r}", fix="use jsonl or csv")
    count = 0
    writer = csv.DictWriter(out, fieldnames=list(COLUMNS), lineterminator="\n") if fmt == "csv" else None
    if writer:
        writer.writeheader()
    for row in rows:
        if writer:
            writer.writerow({n: _csv_cell(n, row.get(n)) for n in COLUMNS})
        else:
            out.write(json.dumps({n: row.get(n) for n in COLUMNS}, ensure_ascii=False) + "\n")
        count += 1
    return count
