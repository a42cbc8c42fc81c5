"""The JSON Schema of the knowledge base's YAML files, generated from the pydantic records that validate them.

Editors check `knowledge/**/*.yaml` against it while typing (the YAML language server: VS Code's YAML extension,
JetBrains IDEs, Neovim), so a misspelt field or a wrong type is underlined before `gpu-advisor kb validate` runs.
The committed copy is docs/knowledge.schema.json (`gpu-advisor kb schema -o docs/knowledge.schema.json`
regenerates it; a test keeps it equal to the records). Cross-record checks (a flavor's GPU exists, every fact's
source exists) stay `kb validate`'s: a schema cannot see other files.
"""
from __future__ import annotations

from typing import Any

from pydantic.json_schema import models_json_schema

from bot.knowledge.loader import KINDS

SCHEMA_ID = "https://gpu-advisor.invalid/knowledge.schema.json"


def knowledge_schema() -> dict[str, Any]:
    """One schema for every knowledge file: a mapping of kinds (sources, gpus, flavors, ...) to lists of records."""
    _, top = models_json_schema([(model, "validation") for model in KINDS.values()],
                                ref_template="#/$defs/{model}")
    props = {kind: {"type": "array", "items": {"$ref": f"#/$defs/{model.__name__}"},
                    "description": (model.__doc__ or "").strip().split("\n")[0]}
             for kind, model in KINDS.items()}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": "gpu-advisor knowledge file",
            "description": "A knowledge/*.yaml file: top-level keys are kinds of records, each a list.",
            "type": "object", "properties": props, "additionalProperties": False,
            "$defs": top.get("$defs", {})}
