"""Which kg session a runtime's session start goes on with and its end ends (`kg.memory.session_ids.which`), the
runtime key, and the journal's check of a session start journaled while the graph was held. Pure."""

from __future__ import annotations

import pytest

from kg.ingest.journal import check_record
from kg.memory.session_ids import runtime_key, which

A, B = "claude-code:aaa", "claude-code:bbb"


@pytest.mark.parametrize(("current", "current_key", "key", "mine", "expected"), [
    (None, None, None, None, None),  # nothing open: a new one (a start), none (an end)
    ("s1", None, None, None, "s1"),  # no runtime id (a typed command, an older hook line): the current one
    ("s1", A, None, None, "s1"),
    ("s1", None, A, None, "s1"),  # the current one was not started for a runtime session (an older kg)
    ("s1", A, A, "s1", "s1"),  # its own
    ("s1", A, B, None, None),  # the current one is another runtime session's: a new one, or none ended
    ("s2", B, A, "s1", "s1"),  # the runtime session's own open session, though another is current
    (None, None, A, "s1", "s1"),
])
def test_which_session_a_runtime_session_goes_on_with_or_ends(current, current_key, key, mine, expected):
    assert which(current, current_key, key, mine) == expected


@pytest.mark.parametrize(("runtime", "rid", "expected"), [
    ("claude-code", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7", "claude-code:5c0375b4-57a5-4f26-b12d-d022ee4e51b7"),
    ("openclaw", " x\n", "openclaw:x"), ("codex", "", None), ("codex", None, None), ("codex", 7, None),
    (None, "x", None), ("codex", "y-" * 250, "codex:" + "y-" * 100),
])
def test_a_runtime_key_is_the_runtime_and_its_id(runtime, rid, expected):
    assert runtime_key(runtime, rid) == expected


@pytest.mark.parametrize(("record", "why"), [
    ({"op": "session", "id": "2026-07-01-002", "at": "2026-07-01T10:00:00", "source": "claude-code"}, None),
    ({"op": "session", "id": "2026-07-01-002", "at": "2026-07-01T10:00:00"}, None),
    ({"op": "session", "id": "../../AGENTS", "at": "2026-07-01T10:00:00"}, "bad session id"),
    ({"op": "session", "id": "2026-07-01-002"}, "'at' missing"),
    ({"op": "session", "id": "2026-07-01-002", "at": "yesterday"}, "not an ISO time"),
    ({"op": "session", "id": "2026-07-01-002", "at": "2026-07-01T10:00:00", "source": 3}, "'source' is not text"),
    ({"op": "sessions", "id": "2026-07-01-002"}, "unknown op"),
])
def test_a_journaled_session_start_is_checked_before_it_is_applied(record, why):
    found = check_record(record, ("learning", "error", "feature"))
    assert (found is None) if why is None else (why in found), found


def test_a_runtime_session_id_holding_a_secret_is_kept_as_its_digest():
    """A hook payload's session_id went raw into memory/.kg/sessions.json: secrets never reach storage."""
    token = "ghp_" + "u8JzPdE0" * 4 + "abcd"
    key = runtime_key("codex", token)
    assert token not in key and key.startswith("codex:sha256-") and key == runtime_key("codex", token)
    assert runtime_key("codex", "1af7fc5e-1111-2222-3333-444455556666") == "codex:1af7fc5e-1111-2222-3333-444455556666"


@pytest.mark.parametrize("rid", ["agent:main:telegram:dm:123456789012345678901", "5c0375b457a54f26b12dd022ee4e51b7",
                                 "2026-12-05-001", "agent:main:main"])
def test_an_id_a_runtime_gives_out_is_kept_as_it_is(rid):
    """Digits alone, hex alone (a dashless UUID): a session already in sessions.json under its raw key is found
    again (the first form digested every long run, and such a session was started anew; the reviewer)."""
    assert runtime_key("openclaw", rid) == f"openclaw:{rid}"


@pytest.mark.parametrize(("sid", "expected"), [
    ("0b5f3c1e-8a2d-4c6f-9e1b-7d3a5c9f2e4b", False),  # a UUID (Claude Code, Codex): nothing the rules could take
    ("abc-12:x.y", False), ("", False),
    ("0b5f3c1e-8a2d-4c6f-9e1b-7d3a5c9f2e4b-ghpAb12Cd", True), ("sprint42refactor", True),
])
def test_may_hold_secret_asks_the_rules_only_about_a_long_enough_run(sid, expected):
    from kg.memory.session_ids import may_hold_secret

    assert may_hold_secret(sid) is expected


def test_early_end_uses_no_private_name_of_session_ids():
    """kg/runtimes/early_end.py read `session_ids._SHORT_RUN` and `session_ids._UUID`: a change to those private
    names would break the Codex SessionEnd's early record unseen. It asks the public `may_hold_secret`."""
    import ast
    from pathlib import Path

    import kg.runtimes.early_end

    tree = ast.parse(Path(kg.runtimes.early_end.__file__).read_text(encoding="utf-8"))
    used = {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "session_ids"}
    assert "may_hold_secret" in used and not [a for a in used if a.startswith("_")], used
