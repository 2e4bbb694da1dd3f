"""A user who undoes the agent's work, starts afresh ("/clear", "/new") and asks for the same thing again, often
amended, is telling the agent its work did not do: a correction, whatever runtime has the undo (aider's /undo, Codex's
/undo, Claude Code's /rewind). A request said again after a fresh start with no undo is a re-run, not one. The wordings
are this file's own."""

from __future__ import annotations

import pytest

from kg.reflect import default_rules
from kg.reflect.detect import learnings, turn_signals
from kg.reflect.parse import Transcript, Turn

RULES = default_rules()
ASK = "add a retry to the upload client: three attempts with a backoff, and log each failure"
AMENDED = "add a retry to the upload client: three attempts with a jittered backoff, and log only the last failure"


def chat(*pairs: tuple[str, str]) -> Transcript:
    return Transcript("text", tuple(Turn(i, r, t, position=f"turn {i + 1}") for i, (r, t) in enumerate(pairs)))


def session(*between: str, again: str = AMENDED) -> Transcript:
    return chat(("user", ASK),
                ("assistant", "I added a retry loop to upload.py with three attempts."),
                *(("user", c) for c in between),
                ("user", again),
                ("assistant", "Done: the client retries three times."))


def corrections(t: Transcript) -> set[int]:
    return {f.turn for f in learnings(t, RULES) if f.category == "correction"}


@pytest.mark.parametrize("between", [("/undo", "/clear"), ("/rewind", "/clear"), ("/undo", "/undo", "/new")])
def test_asking_again_after_undoing_and_starting_afresh_is_a_correction(between):
    t = session(*between)
    last = len(t.turns) - 2
    assert "redirect_after_undo" in turn_signals(t, RULES)[last]
    assert last in corrections(t)


def test_the_same_words_said_again_unchanged_count_too():
    t = session("/undo", "/clear", again=ASK)
    assert len(t.turns) - 2 in corrections(t)


@pytest.mark.parametrize("between", [("/clear",), ("/new",)])
def test_a_request_run_again_after_a_fresh_start_without_an_undo_is_no_correction(between):
    t = session(*between)
    assert "undid" not in turn_signals(t, RULES)[len(t.turns) - 2]
    assert not corrections(t)


def test_a_new_request_after_an_undo_and_a_fresh_start_is_no_redo():
    t = session("/undo", "/clear", again="write a changelog entry for the release notes of version two")
    assert "undid" not in turn_signals(t, RULES)[len(t.turns) - 2]


def test_an_undo_is_redirected_once():
    """Asked again within the same context after the undo (already a redirect there), then run again after a fresh
    start with no new undo: the second time is a re-run."""
    t = chat(("user", ASK), ("assistant", "Added the retry loop."), ("user", "/undo"),
             ("user", AMENDED), ("assistant", "Added a jittered retry."), ("user", "/clear"),
             ("user", AMENDED), ("assistant", "Added a jittered retry."))
    sigs = turn_signals(t, RULES)
    assert "undid" in sigs[3] and "undid" not in sigs[6]
