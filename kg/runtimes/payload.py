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
    wrong = [f"{name} should be {FIELDS[name][1]}, not {_kind(value)}" for name, value in data.items()
             if name in FIELDS and value is not None and not isinstance(value, FIELDS[name][0])]
    if wrong:  # bad input, as a payload that is no object: never taken for an absent field (a session_id that was
        # a number ended whichever session was current) nor met later as a TypeError
        raise UsageError(f"the hook payload on stdin does not fit the hook's schema: {'; '.join(wrong)}")
    # JSON may hold "\u0000" where no path can: met at the first open as "ValueError: embedded null byte", an
    # unexpected failure asking to be reported (QA1 #5), not the bad input it is
    nul = [name for name in PATHS if isinstance(data.get(name), str) and "\x00" in data[name]]
    if nul:
        raise UsageError(f"the hook payload on stdin holds a NUL character in {', '.join(nul)}: no path holds one")
    return data


# The fields kg reads, with the JSON types it takes (null is always taken: the field is absent). A tool's input
# may come as a JSON string (an OpenAI tool call's `arguments`); its response and error are read in any shape.
FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "session_id": ((str,), "text (a JSON string)"),
    "transcript_path": ((str,), "text (the transcript's path, a JSON string)"),
    "cwd": ((str,), "text (a JSON string)"),
    "hook_event_name": ((str,), "text (a JSON string)"),
    "source": ((str,), "text (a JSON string: startup, resume, clear or compact)"),
    "prompt": ((str,), "text (a JSON string)"),
    "stop_hook_active": ((bool,), "true or false"),
    "tool_name": ((str,), "text (a JSON string)"),
    "tool_use_id": ((str,), "text (a JSON string)"),
    "tool_input": ((dict, str), "an object"),
    "is_interrupt": ((bool,), "true or false"),
}


PATHS = ("transcript_path", "cwd", "agent_transcript_path")  # the payload's paths (kg opens the first)


def _kind(value: Any) -> str:
    """The JSON type of `value`, in words."""
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, (int, float)):
        return "a number"
    return {str: "text", list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def _mended(value: Any) -> Any:
    """`value` with each lone UTF-16 surrogate (valid JSON, not text) replaced by U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_mended(k): _mended(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mended(v) for v in value]
    return value
