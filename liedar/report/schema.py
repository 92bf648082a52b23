"""The JSON Schema of `report.json` and a validator for it.

Why validate our own output: the schema is the documented contract for anyone reading
report.json; validating every write keeps the document and the code from drifting.
`jsonschema` is imported lazily (it is a test/extra dependency); without it, writing
still works and validation is skipped with a note in `validate_report`'s return.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from liedar.core.errors import InputError

SCHEMA_FILE = "report.schema.json"


@lru_cache(maxsize=1)
def report_schema() -> dict[str, Any]:
    return json.loads(resources.files("liedar.report").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


def validate_report(data: dict[str, Any]) -> bool:
    """Raise InputError naming the first violation; False if jsonschema is not installed."""
    try:
        import jsonschema
    except ImportError:
        return False
    validator = jsonschema.Draft202012Validator(report_schema())
    # best_match descends into oneOf branches (estimate-or-reason rows), so the message names
    # the field that is wrong ("'lo' is a required property") rather than "not valid under any"
    e = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if e is not None:
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise InputError(f"report JSON violates its schema at {where}: {e.message[:300]}")
    return True
