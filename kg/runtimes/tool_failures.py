"""A failed tool call, as an agent runtime's hook reports it: the failure read from the payload (pure) and the
error entry logged for it, once per call (`kg hook post-tool-use`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class ToolFailure:
    tool: str
    error: str
    command: str
    call_id: str | None = None
    exit_code: int | None = None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content blocks: [{"type": "text", "text": "..."}]
        return "\n".join(_text(v.get("text") if isinstance(v, dict) else v) for v in value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def tool_failure(payload: dict[str, Any]) -> ToolFailure | None:
    """The failure in a hook payload, or None when the tool worked or the user interrupted it. Pure.

    Claude Code sends failures to PostToolUseFailure only (`error`: "Exit code N\n<the output>", `is_interrupt`);
    a PostToolUse payload whose `tool_response` object reports an error or a non-zero exit is read too (other
    runtimes' shape). A `tool_response` that is a bare string (Codex) says nothing about failure: None."""
    if not isinstance(payload, dict):
        return None
    tool = str(payload.get("tool_name") or "tool")
    tin = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
    command = _text(tin.get("command") or tin.get("cmd") or tin.get("file_path") or tin.get("path")
                    or tin.get("url") or "")
    call = payload.get("tool_use_id") if isinstance(payload.get("tool_use_id"), str) else None
    if payload.get("hook_event_name") == "PostToolUseFailure":
        if payload.get("is_interrupt"):
            return None
        if not payload.get("tool_name") and not _text(payload.get("error")).strip():
            return None  # names neither the tool nor the error: nothing to learn ("tool failed: failed" before)
        return ToolFailure(tool, _text(payload.get("error")) or "failed", command, call)
    resp = payload.get("tool_response")
    if not isinstance(resp, dict):
        return None
    code = next((resp[k] for k in ("exit_code", "exitCode", "returncode", "return_code") if k in resp), None)
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    failed = (resp.get("is_error") is True or resp.get("isError") is True or resp.get("success") is False
              or code not in (None, 0) or (isinstance(resp.get("error"), str) and bool(resp["error"].strip())))
    if not failed or resp.get("interrupted") is True:
        return None
    error = _text(resp.get("error")) or _text(resp.get("stderr")) or _text(resp.get("content")) or \
        _text(resp.get("stdout"))
    return ToolFailure(tool, error, command, call, code)


def _own_session(ours: str | None, key: str) -> str:
    """The kg session of a failure from a runtime session kg opened none for (hooks installed mid-session, a start
    kg missed): the one that runtime session's end reflects into, named after its own id (`kg.reflect.apply`), whose
    summary that end writes (`kg.runtimes.hooks.session_end`). `ours`: the payload's session_id as kept
    (`session_ids.stored`), as the transcript's id is; without one (`--runtime-session` named it), the key's."""
    from kg.reflect.apply import _session_of

    return _session_of(ours) or _session_of(key) or key.partition(":")[0]


def post_tool_use(ws: Any, payload: dict[str, Any], now: datetime | str | None = None, *,
                  runtime: str = "claude-code", apply: bool = True, session: str | None = None,
                  key: str | None = None) -> dict[str, Any]:
    """Log an error entry when the payload says the tool failed; nothing otherwise. The entry is the one
    reflection would log for the same call (same summary, error line, pattern key), and its call id is recorded
    (within the session) so that reflecting on the transcript later does not log it again. `apply=False` only
    journals it (the caller has the graph applied after answering, as `kg log` does).

    The entry's session: the one tied to the runtime's session `key` (the payload's session_id), else `session`
    when given (KG_SESSION), else the current one unless it belongs to another runtime session (or none is open):
    then the runtime session's own (`_own_session`). Two Claude Code windows on one workspace: each failure went to
    whichever window's session started last, and the other's summary said "Open Items (none)" (QA1 #2); a window
    kg never saw start still put its failures in the other window's session (review of 3d380c8c)."""
    from dataclasses import replace

    from kg.reflect import state
    from kg.reflect.apply import failure_fields, failure_rules
    from kg.reflect.failures import failure_of_payload
    from kg.reflect.output_lines import plain

    raw = tool_failure(payload)
    if raw is None:
        return {"logged": None, "failed": False}
    # before the summary's cuts, the field limits and the lowercased tag; as one group, so a password the command
    # held is redacted where the error repeats it too
    # and without terminal escapes first: a colour code right before a key hid it from the rules that want a word
    # boundary there, and plain() then joined them in the summary (review rev8 #5)
    tool, error, command = ws.rules.redactor.redact_group([raw.tool, plain(raw.error), raw.command or ""])
    raw = replace(raw, tool=tool.text, error=error.text, command=command.text if raw.command else raw.command)
    rules = failure_rules(ws)
    failure = failure_of_payload(raw.tool, raw.error, raw.command or None, rules, raw.call_id, raw.exit_code)
    if failure is None:  # declined by the user, cancelled because a parallel call failed, or a search found nothing
        return {"logged": None, "failed": True, "skipped": "declined or cascade"}
    if raw.exit_code is not None and failure.exit_code is None:
        failure = replace(failure, exit_code=raw.exit_code)
    from kg.memory import session_ids

    ours = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    if ours:  # a secret-like id as its digest, as every session id (kg.memory.session_ids)
        ours = session_ids.stored(ours, ws.rules.redactor)
    # The entry's kg session. The tie first: a KG_SESSION the runtime passed down from the shell of another window
    # must not take this window's failures.
    mine = session_ids.tied(ws, key)
    named = mine or session  # None: the current one (ws.log takes it as kept)
    sid = mine or (session_ids.given(session, ws.rules.redactor) if session else ws.current_session())
    # The current one as a session end takes it (`which`): not when another runtime session's, as no end of this
    # one would ever end it (kg.runtimes.hooks.end_target)
    if not named and key and session_ids.which(sid, session_ids.key_of(ws, sid), key, None) is None:
        named = sid = _own_session(ours, key)
    # A call id dedupes within one session: the runtime's (the payload's session_id), else the entry's kg session.
    # It is recorded within both, so the reflection of either session's transcript finds it (kg.reflect.apply).
    keys = state.call_keys(raw.call_id, ours or sid, sid) if raw.call_id else ()
    with state.locked(ws) as st:
        if keys and keys[0] in st.seen:
            return {"logged": None, "failed": True, "already_logged": st.seen[keys[0]], "tool": failure.tool}
        # the same failure again in this session: raised as a reflection of the transcript raises it (QA7 #3: the
        # hooks logged 13 read-before-write failures of one session at medium, a reflection of it 13 at high)
        if st.repeat(ours or sid, failure.pattern_key) >= rules.repeat_threshold and not failure.exit_only:
            failure = replace(failure, priority=rules.repeat_priority)
        summary, fields = failure_fields(failure, rules, runtime, "live")
        res = ws.log("error", summary, now=now, apply=apply, session=named, **fields)
        for key in keys:
            st.record(key, res.id)
    return {"logged": res.id, "failed": True, "summary": res.summary, "tool": failure.tool,
            "pattern_key": failure.pattern_key, "call_id": raw.call_id}
