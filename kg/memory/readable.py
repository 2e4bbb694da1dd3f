"""Preference values as a person reads them.

`memory/preferences.json` holds strings set with `kg pref set`, but also structured values: the lifecycle
mirrors the learned preferences there as a list of `{"id", "text", "since"}` records, and people put lists or
objects in by hand. Everything that shows a preference to a person or an agent (USER.md, `kg pref list`,
`kg inject`, the session brief, the MCP tools) renders it with this one function, so no Python `repr` such as
`[{'id': ...}]` ever reaches memory.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["preference_text"]


def preference_text(value: Any, *, sep: str = "; ") -> str:
    """One readable line for a preference value. Pure.

    A string stays as it is; a record with a `text` shows that text (and `since` in brackets); a list joins
    its items with `sep`; any other object reads as `key: value` pairs; numbers and booleans as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, dict):
        if "text" in value:
            since = value.get("since")
            return f"{preference_text(value['text'])}" + (f" (since {since})" if since else "")
        return ", ".join(f"{k}: {preference_text(v, sep=', ')}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return sep.join(text for text in (preference_text(v, sep=", ") for v in value) if text)
    return json.dumps(value, ensure_ascii=False)
