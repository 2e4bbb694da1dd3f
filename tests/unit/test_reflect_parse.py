"""Transcript parsing: formats, detection, damaged and hostile input."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.reflect import TranscriptError, detect_format, parse_bytes, parse_text, read_transcript

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("KG_SHARED_DATA", REPO.parent / "shared" / "data")) / "transcripts"


def cc(*records: dict) -> str:
    return "\n".join(json.dumps(r) for r in records) + "\n"


USER = {
    "type": "user",
    "sessionId": "s-1",
    "timestamp": "2026-01-01T00:00:00Z",
    "message": {"role": "user", "content": "run the tests"},
}
CALL = {
    "type": "assistant",
    "message": {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Running them."},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}},
        ],
    },
}
RESULT = {
    "type": "user",
    "message": {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": "Exit code 1\nboom"}
        ],
    },
}


def test_claude_code_roles_and_tool_results():
    t = parse_text(cc(USER, CALL, RESULT))
    assert t.format == "claude-code"
    assert t.session_hint == "s-1"
    assert [(x.role, x.tool_name) for x in t.turns] == [
        ("user", None),
        ("assistant", None),
        ("assistant", "Bash"),
        ("tool", "Bash"),
    ]
    tool = t.turns[-1]
    # A tool_result arrives as a "user" record: it is a tool turn, never the user speaking.
    assert (tool.is_error, tool.tool_input, tool.text, tool.position) == (
        True,
        "pytest -q",
        "Exit code 1\nboom",
        "line 3",
    )


def test_claude_code_meta_records_are_system():
    meta = {
        "type": "user",
        "isCompactSummary": True,
        "message": {"role": "user", "content": "This session is..."},
    }
    t = parse_text(cc(USER, meta))
    assert [x.role for x in t.turns] == ["user", "system"]


def test_truncated_lines_and_unknown_types_are_counted():
    text = cc(USER, {"type": "mystery", "x": 1}, CALL) + '{"type": "user", "message": {"ro'
    t = parse_text(text)
    assert len(t.turns) == 3
    assert t.skipped == {"truncated or invalid JSON line": 1, "unknown record type 'mystery'": 1}


def test_gzip_and_truncated_gzip():
    blob = gzip.compress(cc(USER, CALL, RESULT).encode())
    assert len(parse_bytes(blob).turns) == 4
    partial = parse_bytes(blob[: len(blob) - 6])  # trailer cut off
    assert partial.format == "claude-code" and partial.turns


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x00\x01\x02binary\x00" * 50, "looks binary"),
        (bytes(range(128, 256)) * 40, "not UTF-8"),
        (b'{"hello": "world"}', "name the format with --format"),
        (b"\x1f\x8bnot really gzip", "damaged gzip"),
    ],
)
def test_unreadable_input_raises_a_helpful_error(data, message):
    with pytest.raises(TranscriptError, match=message):
        parse_bytes(data)


def test_transcript_error_is_a_value_error():
    assert issubclass(TranscriptError, ValueError)


@pytest.mark.parametrize("data", [b"", b"   \n\n", gzip.compress(b"", mtime=0)])
def test_empty_input_is_empty_not_an_error(data):
    t = parse_bytes(data)
    assert t.turns == () and t.skipped == {"empty input": 1}


def test_unknown_format_name():
    with pytest.raises(TranscriptError,
                       match="use one of claude-code, codex, openclaw, aider, openai, specstory, text"):
        parse_bytes(b"hi", format="yaml")


def test_openai_messages_with_tool_calls():
    doc = {
        "messages": [
            {"role": "system", "content": "be nice"},
            {"role": "user", "content": [{"type": "text", "text": "list files"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "shell", "arguments": '{"cmd": "ls /nope"}'},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": "ls: cannot access '/nope': No such file or directory",
            },
            {"role": "critic", "content": "?"},
        ]
    }
    t = parse_text(json.dumps(doc))
    assert t.format == "openai"
    assert [x.role for x in t.turns] == ["system", "user", "assistant", "tool"]
    assert (t.turns[3].tool_name, t.turns[3].tool_input, t.turns[3].is_error) == ("shell", "ls /nope", None)
    assert t.turns[1].position == "turn 2"
    assert t.skipped == {"unknown role 'critic'": 1}


def test_openai_jsonl():
    text = '{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n{"role": "us'
    t = parse_text(text)
    assert t.format == "openai" and len(t.turns) == 2
    assert t.skipped == {"truncated or invalid JSON line": 1}


SPECSTORY = """<!-- Generated by SpecStory -->

# Fixing things (2025-04-28 14:53:22)

_**User**_

please fix the build

---

_**Assistant**_

Done.

---

_**User**_

no, that's not right

---
"""


def test_specstory_turns_and_lines():
    t = parse_text(SPECSTORY)
    assert t.format == "specstory"
    assert t.session_hint == "Fixing things (2025-04-28 14:53:22)"
    assert [(x.role, x.text, x.position) for x in t.turns] == [
        ("user", "please fix the build", "line 7"),
        ("assistant", "Done.", "line 13"),
        ("user", "no, that's not right", "line 19"),
    ]


def test_a_specstory_history_saved_before_its_first_turn_holds_no_turn():
    """SpecStory saves a history with its banner and a heading before any turn (an untitled Copilot session):
    it was read as plain text, its three header lines as the user's turns."""
    saved = ("<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n# 2026-05-30 16:02:57Z\n\n"
             "<!-- VS Code Copilot IDE Session 0000 (2026-05-30 16:02:57Z) -->\n")
    for text in (saved, "\ufeff" + saved):  # a byte-order mark before the banner too
        t = parse_text(text)
        assert t.format == "specstory" and t.turns == ()
    other = "<!-- Generated by SpecStory -->\n\n## User\n\nplease stop doing X\n\n## Assistant\n\nok\n"
    with pytest.raises(TranscriptError, match="not a conversation"):  # the banner, then sections of another shape:
        parse_text(other)  # refused as before, saying what kg reads (not taken for a history with no turn)
    with pytest.raises(TranscriptError, match="not SpecStory markdown"):
        parse_text(other, format="specstory")
    with pytest.raises(TranscriptError, match="not SpecStory markdown"):  # forced, without the banner: still said
        parse_text("# notes\n\nno sections here\n", format="specstory")


def test_the_prompt_of_codexs_auto_review_agent_is_the_harness_not_the_user():
    """Codex CLI runs a reviewing agent whose "user" section is the harness asking it to assess another session
    (quoting that session's user); SpecStory saves it under `_**Agent (codex-auto-review ...)**_`. Its prompt was read
    as the user's words, and the quoted user's complaints as corrections."""
    saved = ("<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n_**User (2026-07-13 20:09:52Z)**_\n\n"
             "Assess the action below. >>> [1] user: no, that is wrong, revert it\n\n"
             "_**Agent (codex-auto-review 2026-07-13 20:09:58Z)**_\n\n{\"outcome\": \"allow\"}\n\n"
             "_**User (2026-07-13 20:19:05Z)**_\n\nthanks\n\n_**Agent (gpt-5 2026-07-13 20:19:09Z)**_\n\nok\n")
    assert [(t.role, t.line) for t in parse_text(saved).turns] == [("system", 5), ("assistant", 9), ("user", 13),
                                                                    ("assistant", 17)]


@pytest.mark.parametrize(
    ("text", "roles"),
    [
        ("User: fix it\nAssistant: done\nUser: no, wrong file\nmore words", ["user", "assistant", "user"]),
        ("用户：改一下\n助手：好的", ["user", "assistant"]),
        ("just a note\n\nsecond paragraph", ["user", "user"]),
    ],
)
def test_plain_text(text, roles):
    t = parse_text(text)
    assert t.format == "text"
    assert [x.role for x in t.turns] == roles


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        (cc(USER), "claude-code"),
        ('[{"role": "user", "content": "x"}]', "openai"),
        (SPECSTORY, "specstory"),
        ("hello there", "text"),
        ('{"type": "user", "message": {"ro\n' + cc(USER), "claude-code"),
    ],
)
def test_detect_format(text, fmt):
    assert detect_format(text) == fmt


def test_format_can_be_forced():
    assert parse_text(SPECSTORY, format="text").format == "text"


def test_read_transcript_missing_and_folder(tmp_path):
    with pytest.raises(TranscriptError, match="does not exist"):
        read_transcript(tmp_path / "nope.jsonl")
    with pytest.raises(TranscriptError, match="is a folder"):
        read_transcript(tmp_path)


def test_read_transcript_stdin():
    import io

    t = read_transcript("-", stdin=io.BytesIO(cc(USER).encode()))
    assert t.format == "claude-code"


# Without the shared data, one case that fails through the `shared_data` fixture (loudly, never an empty skip).
@pytest.mark.parametrize(
    "name", sorted(p.name for p in (DATA / "claude_code").glob("*.jsonl*")) or ["shared data missing"]
)
def test_real_claude_code_transcripts_parse_cleanly(shared_data, name):
    t = read_transcript(shared_data / "transcripts" / "claude_code" / name)
    assert t.format == "claude-code" and t.skipped == {}
    assert any(x.role == "user" for x in t.turns)
    assert all(x.role == "tool" for x in t.turns if x.is_error)  # only a tool's result is an error


def test_real_specstory_user_turns(shared_data):
    t = read_transcript(shared_data / "transcripts" / "specstory" / "2025-04-28_21-34-creating-a-git-push-task.md")
    assert sum(1 for x in t.turns if x.role == "user") == 5


LINES = st.sampled_from(
    [cc(USER), cc(CALL), cc(RESULT), '{"type": "user", "mess', "\x00", "_**User**_", "", "[1, 2"]
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=400), st.lists(LINES, max_size=8).map(lambda xs: "\n".join(xs).encode())))
def test_any_input_parses_or_raises_transcript_error(data):
    """Never a crash: a Transcript, or a TranscriptError that says what to do."""
    from kg.reflect import default_rules, detect

    try:
        t = parse_bytes(data)
    except TranscriptError as exc:
        assert str(exc)
        return
    detect(t, default_rules())
