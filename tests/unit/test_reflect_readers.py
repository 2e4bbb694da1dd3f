"""Every transcript reader on every real sample in ../shared/data/runtimes (counts from its INDEX.md), and the
formats' edge cases as the runtimes write them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg.core.policy import packaged
from kg.reflect.failures import failures, load_rules
from kg.reflect.parse import TranscriptError, parse_bytes, read_transcript

RULES = load_rules(packaged("errors"))
# path under runtimes/ -> (format, user turns, failed calls); failures counted as INDEX.md says, except aider,
# where one failed reply ("did not conform" + "N blocks failed to match") is one failure, and OpenClaw 2026.2,
# whose failures are marked by details.status / exitCode (see its README); pi's "Command aborted" is the user's
# interrupt, not a failure. Not counted either (rules/errors.toml [answers], [lines]): a search or compare that
# exits 1 with no output (its answer: Codex's two `rg`, pi's eleven `grep`; pi's one more drop is an aborted
# `npm test`), and a call whose whole result is the bare word "Error" (fe5e1c67's `find`: nothing to learn from).
SAMPLES = {
    "codex/transcripts/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl": ("codex", 2, 2),
    "codex/transcripts/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl": ("codex", 3, 1),
    "codex/transcripts/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl": ("codex", 1, 0),
    "openclaw/transcripts/b3db607f-7ae8-4089-b806-44800e961672.jsonl": ("openclaw", 4, 2),
    "openclaw/transcripts/f967d602-325a-4a45-8d54-ee17484cfd96.jsonl": ("openclaw", 3, 3),
    "openclaw/transcripts/pi-coding-agent/large-session.jsonl": ("openclaw", 88, 6),
    "claude_code/transcripts/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": ("claude-code", 1, 1),
    "claude_code/transcripts/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": ("claude-code", 1, 3),
    "claude_code/transcripts/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": ("claude-code", 2, 22),
    "aider/aider-ai_aider/chat-history.part1.md": ("aider", None, 32),
    "aider/aider-ai_aider/website-examples/complex-change.md": ("aider", None, 0),
    "aider/aider-ai_aider/website-examples/chat-transcript-css.md": ("aider", None, 0),
    "aider/aider-ai_aider/website-examples/pong.md": ("aider", None, 0),
    "aider/aquaticat_monochromatic/.aider.chat.history.md": ("aider", None, 7),
    "aider/alexshchuka_mozgoslav/.aider.chat.history.md": ("aider", None, 0),
    "aider/afi-protocol_afi-core/.aider.chat.history.md": ("aider", None, 1),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_reader_on_every_real_sample(shared_data, name):
    fmt, users, failed = SAMPLES[name]
    t = read_transcript(shared_data / "runtimes" / name)
    assert t.format == fmt and not t.skipped
    if users is not None:
        assert sum(1 for x in t.turns if x.role == "user") == users
    found = failures(t, RULES).found
    assert len(found) == failed
    assert all(f.line or f.exit_only for f in found)
    if fmt != "aider":  # every failure carries its tool call's id, once
        assert all(f.call_id for f in found) and len({f.call_id for f in found}) == len(found)


def test_every_sample_is_listed(shared_data):
    root = shared_data / "runtimes"
    files = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "transcripts" in p.parts
             or p.name.endswith(".aider.chat.history.md") or (p.parent.name in ("aider-ai_aider", "website-examples")
                                                              and p.suffix == ".md")}
    assert files == set(SAMPLES)


def test_codex_polls_speak_for_the_call_that_started_them(shared_data):
    t = read_transcript(shared_data / "runtimes" / "codex" / "transcripts"
                        / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
    assert t.session_hint == "019e1625-789d-76c0-80ab-3724b5ddb799"
    found = failures(t, RULES).found
    # the failure arrives in a write_stdin poll and again as exec_command_end: one failure, the original command
    assert found[0].call_id == "call_NqXBF7JK4NH5M85YXgojxxmC" and found[0].command.startswith("rg -n ")
    assert found[0].line == "rg: node_modules/opencode-ai: No such file or directory (os error 2)"
    # the two `rg` polls that exited 1 with no output found nothing: an answer, not a failure
    assert [f.exit_only for f in found] == [False, False]
    assert found[1].error_class == "test_failure" and found[1].area == "tests"


def test_codex_old_shell_format(shared_data):
    t = read_transcript(shared_data / "runtimes" / "codex" / "transcripts"
                        / "rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl")
    tools = [x for x in t.turns if x.role == "tool"]
    assert len(tools) == 3 and all(x.exit_code == 0 and x.is_error is False for x in tools)
    failing = json.dumps({"timestamp": "t", "type": "response_item", "payload": {
        "type": "function_call_output", "call_id": tools[0].call_id,
        "output": json.dumps({"output": "fatal: not a git repository", "metadata": {"exit_code": 128}})}})
    data = (shared_data / "runtimes" / "codex" / "transcripts"
            / "rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl").read_bytes()
    found = failures(parse_bytes(data + failing.encode() + b"\n"), RULES).found
    assert [(f.exit_code, f.line) for f in found] == [(128, "fatal: not a git repository")]


def test_openclaw_stray_prefix_and_old_header(shared_data):
    folder = shared_data / "runtimes" / "openclaw" / "transcripts"
    assert (folder / "b3db607f-7ae8-4089-b806-44800e961672.jsonl").read_bytes().startswith(b"/speci{")
    t = read_transcript(folder / "b3db607f-7ae8-4089-b806-44800e961672.jsonl")
    assert t.session_hint == "b3db607f-7ae8-4089-b806-44800e961672"
    # OpenClaw's start-up instruction after /new is not the user speaking
    assert t.turns[1].role == "system" and t.turns[1].text.startswith("A new session was started")
    pi = read_transcript(folder / "pi-coding-agent" / "large-session.jsonl")
    assert pi.format == "openclaw" and pi.session_hint == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"


def test_claude_code_sidechain_and_subagent_files(shared_data, tmp_path):
    """Sub-agent lines (inline in 1.0.x, in <session>/subagents/ in newer versions) are the session's tool calls;
    the main agent's prompt to a sub-agent is not the user."""
    real = shared_data / "runtimes" / "claude_code" / "transcripts" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
    inline = read_transcript(real)
    assert all(t.role != "user" for t in inline.turns if t.sidechain)
    lines = real.read_text(encoding="utf-8").splitlines()
    main = [ln for ln in lines if not json.loads(ln).get("isSidechain")]
    side = [ln for ln in lines if json.loads(ln).get("isSidechain")]
    (tmp_path / real.name).write_text("\n".join(main) + "\n", encoding="utf-8")
    (tmp_path / real.stem / "subagents").mkdir(parents=True)
    (tmp_path / real.stem / "subagents" / "agent-1.jsonl").write_text("\n".join(side) + "\n", encoding="utf-8")
    split = read_transcript(tmp_path / real.name)
    key = sorted((f.call_id, f.pattern_key, f.line) for f in failures(inline, RULES).found)
    assert sorted((f.call_id, f.pattern_key, f.line) for f in failures(split, RULES).found) == key and len(key) == 22


def test_a_sub_agent_file_past_the_size_limit_is_skipped_as_the_session_file_would_be(tmp_path, monkeypatch):
    """Sub-agent files go through the session file's own reader (a regular file, the same size limit): one past
    the limit is skipped with a note, the others are read."""
    from kg.core import inputs

    def lines(text: str, n: int) -> str:
        return "".join(json.dumps({"type": "assistant", "sessionId": "s", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": text}}]}}) + "\n"
            for i in range(n))

    (tmp_path / "s1.jsonl").write_text(lines("ls", 2), encoding="utf-8")
    subs = tmp_path / "s1" / "subagents"
    subs.mkdir(parents=True)
    (subs / "agent-big.jsonl").write_text(lines("make build", 8000), encoding="utf-8")  # ~1.4 MB
    (subs / "agent-ok.jsonl").write_text(lines("make test", 1), encoding="utf-8")
    with monkeypatch.context() as m:
        m.setattr(inputs, "MAX_INPUT_BYTES", 1024 * 1024)
        t = read_transcript(tmp_path / "s1.jsonl")
    assert t.skipped == {"sub-agent file agent-big.jsonl, which is larger than 1 MB, more than kg reads": 1}
    assert [x.tool_input for x in t.turns] == ["ls", "ls", "make test"]


def test_claude_code_compaction_summary_is_not_the_user():
    records = [
        {"type": "user", "message": {"role": "user", "content": "fix the build"}, "sessionId": "s"},
        {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"},
        {"type": "user", "isCompactSummary": True, "message": {"role": "user", "content":
            "This session is being continued from a previous conversation. No, that's wrong: use pnpm"}}]
    t = parse_bytes("\n".join(json.dumps(r) for r in records).encode())
    assert [x.role for x in t.turns] == ["user", "system"]


def test_aider_turns():
    text = ("# aider chat started at 2024-08-05 10:00:00\n\n> Aider v0.50\n\n#### make the button blue  \n\n"
            "Here is the change:\n\n> The LLM did not conform to the edit format.  \n"
            "> # 1 SEARCH/REPLACE block failed to match!\n\n"
            "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in app.css\n"
            "#### /run pytest -q\n> Applied edit to app.css\n")
    t = parse_bytes(text.encode())
    assert t.format == "aider" and t.session_hint == "2024-08-05 10:00:00"
    assert [x.role for x in t.turns if x.role == "user"] == ["user", "user"]
    (f,) = failures(t, RULES).found
    assert f.error_class == "edit_no_match" and "SearchReplaceNoExactMatch" in f.error


@pytest.mark.parametrize("data", [b'{"some": "config"}', b'[1, 2, 3]', b'{"kind": "x"}\n{"kind": "y"}\n'])
def test_unknown_formats_name_the_formats_kg_reads(data):
    with pytest.raises(TranscriptError) as exc:
        parse_bytes(data, name="f.json")
    message = str(exc.value)
    for fmt in ("Claude Code JSONL", "Codex rollout JSONL", "OpenClaw/pi session JSONL", "aider"):
        assert fmt in message


def test_transcript_error_for_a_folder(tmp_path: Path):
    with pytest.raises(TranscriptError, match="is a folder"):
        read_transcript(tmp_path)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_runtime_gives_the_agents_next_turn(shared_data, name):
    """What detection reads after each user turn (kg.reflect.signals.views): the agent's reply, when it wrote one
    before the user spoke again, and the commands and paths of its tool calls, when it made some."""
    from kg.reflect import default_rules
    from kg.reflect.detect import own_lines, speaking_turns
    from kg.reflect.signals import views

    rules = default_rules()
    t = read_transcript(shared_data / "runtimes" / name)
    users = speaking_turns(t, rules)
    v = views(t, rules, users, {i: own_lines(t.turns[i].text, rules) for i in users})
    replied = acted = 0
    for n, i in enumerate(users):
        end = users[n + 1] if n + 1 < len(users) else len(t.turns)
        # up to a fresh context ("/clear", "/exit", a new aider session): what follows it answers nothing before
        window = t.turns[i + 1:end]
        cut = next((k for k, u in enumerate(window) if u.role in ("user", "system")
                    and any(p.search(u.text[:200]) for p in rules.signals.resets)), None)
        window = window if cut is None else window[:cut]
        said = any(u.role == "assistant" and any(c.isalpha() for c in u.text) for u in window)
        ran = any(u.role == "assistant" and u.tool_name and u.tool_input for u in window)
        assert bool(v[i].next) or not said, (i, t.turns[i].text[:60])
        assert bool(v[i].next_tools) or not ran, (i, t.turns[i].text[:60])
        replied, acted = replied + said, acted + ran
    assert replied or acted or not users  # every sample shows the agent answering at least once


@pytest.mark.parametrize("name", ["aider/aider-ai_aider/chat-history.part1.md",  # old aider: all inside `> `
                                  "aider/aquaticat_monochromatic/.aider.chat.history.md",  # new: plain lines after
                                  "aider/afi-protocol_afi-core/.aider.chat.history.md"])
def test_aider_failed_edit_names_the_file_it_missed(shared_data, name):
    import re
    source = (shared_data / "runtimes" / name).read_text(encoding="utf-8")
    missed = re.findall(r"(?m)^(?:> )?## SearchReplaceNoExactMatch: .* in (\S+)", source)
    t = read_transcript(shared_data / "runtimes" / name)
    found = [f for f in failures(t, RULES).found if "failed to match" in f.error]
    assert found and len(found) <= len(missed)
    for f in found:  # the cause the entry gives is the missed file, not "N blocks failed to match!"
        assert "SearchReplaceNoExactMatch" in f.line and f.line.split(" in ")[-1].strip() in missed
        assert "The SEARCH section must exactly match" in f.error
    assert all(f.summary(160).endswith(f.line.split(" in ")[-1].strip()) for f in found)


def test_aider_ctrl_c_mid_reply_is_an_interrupt_and_at_the_prompt_is_not(shared_data):
    """aider prints "^C KeyboardInterrupt" when the user stops it; the reader dropped aider's `> ` lines, so "only edit
    index.html" right after the user stopped the agent editing style.css (aider's own published example) read as a
    plain request. A Ctrl-C before aider printed the reply's token count stopped the agent: a turn saying so. One at
    the input prompt (after the token count, or with no reply since the user spoke) clears the input or exits aider."""
    from kg.reflect import default_rules
    from kg.reflect.detect import learnings, turn_signals

    rules = default_rules()
    t = read_transcript(shared_data / "runtimes" / "aider" / "aider-ai_aider" / "website-examples"
                        / "chat-transcript-css.md")
    (said,) = [u.index for u in t.turns if u.role == "user" and u.text == "only edit index.html"]
    assert (t.turns[said - 1].role, t.turns[said - 1].text) == ("system", "Interrupted")
    assert {"interrupted", "redirect_after_interrupt"} <= set(turn_signals(t, rules)[said])
    assert "correction" in {f.category for f in learnings(t, rules) if f.turn == said}
    exits = read_transcript(shared_data / "runtimes" / "aider" / "afi-protocol_afi-core" / ".aider.chat.history.md")
    assert "^C KeyboardInterrupt" in (shared_data / "runtimes" / "aider" / "afi-protocol_afi-core"
                                      / ".aider.chat.history.md").read_text(encoding="utf-8")
    assert not [u for u in exits.turns if u.text == "Interrupted"]
