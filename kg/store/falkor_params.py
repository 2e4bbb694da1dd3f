"""Query parameters as the `CYPHER name=value ...` header FalkorDB reads, written here rather than by the client.

The falkordb client turns parameters into Cypher literals one value at a time in Python (about 40 % of a
team import at 10k events: a chunk of 2,000 rows is 300,000 calls). Here:

- A list of rows given as lists (kg/store/falkor_copy.py sends its chunks so) is written by `json.dumps`, in C.
  JSON's text is a Cypher literal for what those rows hold (text, numbers, booleans, null, lists), with one
  exception checked for: FalkorDB reads every JSON escape but `\\uXXXX` (a control character other than
  newline and tab, or a literal backslash-u in the text), so a chunk holding one is written the slow way.
- Anything else (a map, one value) is written the client's way, in one pass that also converts datetimes and
  null list items (kg/store/falkor_dialect.py `to_server`).

Values are checked as `kg.store._check_values` checks them for Kùzu (a number past 64 bits, text that is
not UTF-8), without a second walk over a bulk chunk: the JSON text is searched for a run of 19 digits (then
the chunk is walked for the message) and encoded to UTF-8 once.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from kg.store import falkor_dialect as dialect

_LONG_NUMBER = re.compile(r"\d{19}")
_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False, separators=(",", ":"),
                         default=lambda v: dialect.to_server(v) if isinstance(v, datetime) else _refuse(v))


class _Slow(Exception):
    """The fast form cannot hold this value: write it the slow way."""


def _refuse(value: Any) -> Any:
    raise _Slow(type(value).__name__)


def header(params: dict[str, Any]) -> str:
    """`CYPHER a=1 b="x" ` for the parameters, to put before the query text."""
    if not params:
        return ""
    parts = []
    for key, value in params.items():
        if "`" in key or not key:
            raise ValueError(f"a parameter name cannot be empty or hold a backtick: {key!r}")
        parts.append(f"`{key}`={_literal(key, value)}")
    text = "CYPHER " + " ".join(parts) + " "
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        from kg.store import _check_values

        _check_values(params)  # names the value
        raise
    return text


def _literal(name: str, value: Any) -> str:
    if isinstance(value, list) and value and all(type(r) is list for r in value):
        try:
            text = _JSON.encode(_rows(value))
        except (_Slow, ValueError):
            text = ""
        if text and "\\u" not in text and not _LONG_NUMBER.search(text):
            return text
    from kg.store import _check_values

    _check_values(value, name)
    return _slow(dialect.to_server(value))


def _rows(rows: list[list[Any]]) -> list[list[Any]]:
    """Rows whose items may be lists: a null inside such a list becomes dialect's marker (arrays hold no null);
    a map inside a row is left to the slow way."""
    out = rows
    for i, row in enumerate(rows):
        for j, item in enumerate(row):
            t = type(item)
            if t is dict:
                raise _Slow("map")
            if t is list and None in item:
                if out is rows:
                    out = [list(r) for r in rows]
                out[i][j] = dialect.to_server(item)
    return out


def _slow(value: Any) -> str:
    """One value as a Cypher literal, the way the falkordb client writes it (its `stringify_param_value`)."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(map(_slow, value)) + "]"
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            k = str(k)
            if "`" in k or not k:
                raise ValueError(f"a map key cannot be empty or hold a backtick: {k!r}")
            items.append(f"`{k}`:{_slow(v)}")
        return "{" + ",".join(items) + "}"
    return str(value)
