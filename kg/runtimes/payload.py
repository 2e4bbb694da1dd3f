"""A hook's payload: the JSON object a runtime writes on the hook's stdin, read into plain values."""

from __future__ import annotations

import json
from typing import Any

from kg.core.errors import UsageError


def read_payload(text: str) -> dict[str, Any]:
    """A hook's JSON payload from stdin; empty input is an empty payload."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"the hook payload on stdin is not JSON ({exc.msg} at line {exc.lineno}); the runtime "
                         "sends one JSON object") from None
    if not isinstance(data, dict):
        raise UsageError("the hook payload on stdin must be a JSON object")
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # "\ud83d" alone: a runtime cut a tool's output inside an emoji's UTF-16 pair
        data = _mended(data)
    return data


def _mended(value: Any) -> Any:
    """`value` with each lone UTF-16 surrogate (valid JSON, not text) replaced by U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_mended(k): _mended(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mended(v) for v in value]
    return value
