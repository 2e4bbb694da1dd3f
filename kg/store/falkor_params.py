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
not UTF-8), a bulk chunk column by column: a column's set of value types is taken in C (`set(map(type, ...))`),
and only a column that holds integers or lists is looked into (a search of the JSON text for a run of 19
digits cost more than writing it). The text is encoded to UTF-8 once.
"""

from __future__ import annotations

import json
from datetime import datetime
from itertools import chain
from typing import Any

from kg.store import falkor_dialect as dialect

_INT64 = (-(2**63), 2**63 - 1)
_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False, separators=(",", ":"),
                         default=lambda v: dialect.to_server(v) if isinstance(v, datetime) else _refuse(v))
_ROW = (list, tuple)


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
    if isinstance(value, list) and value and all(type(r) in _ROW for r in value):
        try:
            text = _JSON.encode(_rows(value))
        except (_Slow, ValueError):
            text = ""
        if text and "\\u" not in text:
            return text
    from kg.store import _check_values

    _check_values(value, name)
    return _slow(dialect.to_server(value))


def _rows(rows: list[Any]) -> list[Any]:
    """The rows (lists or tuples of one width) as JSON can write them: a null inside a list item becomes
    dialect's marker (arrays hold no null). A map, a number past 64 bits, or rows of unequal width are left
    to the slow way (which names a bad value)."""
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise _Slow("ragged")
    out = rows
    for j, column in enumerate(zip(*rows, strict=True)):
        kinds = set(map(type, column))
        if dict in kinds:
            raise _Slow("map")
        if int in kinds:
            _fits([v for v in column if type(v) is int])
        if list in kinds or tuple in kinds:
            items = list(chain.from_iterable(v for v in column if type(v) in _ROW))
            inner = set(map(type, items))
            if dict in inner or list in inner or tuple in inner:
                raise _Slow("nested")
            if int in inner:
                _fits([v for v in items if type(v) is int])
            if type(None) in inner:
                if out is rows:
                    out = [list(r) for r in rows]
                for r in out:
                    if type(r[j]) in _ROW and None in r[j]:
                        r[j] = dialect.to_server(r[j])
    return out


def _fits(numbers: list[int]) -> None:
    if numbers and (min(numbers) < _INT64[0] or max(numbers) > _INT64[1]):
        raise _Slow("a number past 64 bits")


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
