"""A failing tool that coloured its output (cargo, vitest, npm: ANSI escape sequences) is named as the same failure
printed plain, by the live hook and by reflection alike: the same error line, summary and pattern key, so its
recurrences count together and the daily log holds no "[0m" (QA: the codes were read as words)."""

from __future__ import annotations

import json
import re
from pathlib import Path

CARGO = ("Exit code 101\n\x1b[0m\x1b[1m\x1b[38;5;9merror[E0425]\x1b[0m\x1b[0m\x1b[1m: cannot find value `x` in this "
         "scope\x1b[0m")
CODES = re.compile(r"\x1b\[[0-9;]*m")


def _hook(run_kg, error: str, call: str) -> dict:
    payload = {"session_id": "s", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_use_id": call,
               "tool_input": {"command": "cargo build"}, "error": error}
    done = run_kg("hook post-tool-use --runtime claude-code --json", input=json.dumps(payload),
                  env={"KG_HOOK_WAIT": "1"})
    assert done.exit_code == 0, done.stderr
    return done.json


def test_the_hook_names_a_coloured_failure_as_the_plain_one(ws, run_kg):
    coloured, bare = _hook(run_kg, CARGO, "t2"), _hook(run_kg, CODES.sub("", CARGO), "t3")
    assert coloured["summary"] == bare["summary"] == "`cargo build` failed: error[E0425]: cannot find value `x` in " \
                                                     "this scope"
    assert coloured["pattern_key"] == bare["pattern_key"]
    day = "\n".join(p.read_text(encoding="utf-8") for p in (ws.root / "memory").glob("*.md"))
    assert "error[E0425]" in day and "[0m" not in day and "[38;5;9m" not in day


def test_reflection_of_a_coloured_transcript_finds_what_the_plain_one_does(ws, run_kg, shared_data, tmp_path):
    """The real transcript QA saw codes in, with each failing tool_result coloured as a terminal prints it."""
    source = shared_data / "runtimes/claude_code/transcripts/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
    lines, coloured = source.read_text(encoding="utf-8").splitlines(), 0
    for i, line in enumerate(lines):
        rec = json.loads(line)
        content = rec.get("message", {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result" and block.get("is_error") and isinstance(block.get("content"), str):
                head, _, rest = block["content"].partition("\n")
                if head.startswith("Exit code"):
                    head, rest = head + "\n\x1b[0m\x1b[1m\x1b[38;2;255;0;0m", rest + "\x1b[0m"
                else:
                    head = "\x1b]8;;file:///x\x1b\\\x1b[31m" + head + "\x1b[39m\x1b]8;;\x1b\\"
                block["content"] = f"{head}\n{rest}" if rest else head
                coloured += 1
        lines[i] = json.dumps(rec)
    copy = tmp_path / source.name
    copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert coloured >= 20

    def found(path: Path) -> list[tuple]:
        out = run_kg(["reflect", str(path), "--json"]).json["findings"]
        return [(f["summary"], f["evidence"], f["pattern_key"]) for f in out if f["kind"] == "error"]

    plain_run, coloured_run = found(source), found(copy)
    assert len(plain_run) >= 10 and coloured_run == plain_run


def test_a_codex_vitest_failure_whose_escapes_lost_their_esc_is_still_a_test_failure(ws, run_kg, tmp_path):
    """Codex's function_call_output of `npx vitest run`, coloured, once with its ESC bytes and once without (a
    copy that lost them keeps "[31mFAIL[39m"): both are the plain run's test failure."""
    out = ("Exit code: 1\nWall time: 2.1 seconds\nOutput:\n\n {c}[31mFAIL{c}[39m src/a.test.ts > adds\n"
           "{c}[31m{c}[1mAssertionError{c}[22m: expected 3 to be 4 // Object.is equality{c}[39m\n"
           " {c}[2m Test Files {c}[22m {c}[1m{c}[31m1 failed{c}[39m{c}[22m\n")

    def rollout(text: str) -> Path:
        recs = [{"type": "session_meta", "payload": {"id": "019e0000-0000-7000-8000-000000000001"}},
                {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "call_id": "c1",
                                                      "arguments": json.dumps({"cmd": "npx vitest run"})}},
                {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1",
                                                      "output": text}}]
        path = tmp_path / f"rollout-{len(list(tmp_path.iterdir()))}.jsonl"
        path.write_text("\n".join(json.dumps({"timestamp": "2026-07-01T09:00:00Z", **r}) for r in recs) + "\n",
                        encoding="utf-8")
        return path

    keys = []
    for text in (re.sub(r"\{c\}\[[0-9;]*m", "", out), out.format(c="\x1b"), out.format(c="")):
        findings = [f for f in run_kg(["reflect", str(rollout(text)), "--json"]).json["findings"]
                    if f["kind"] == "error"]
        assert len(findings) == 1
        keys.append((findings[0]["pattern_key"], findings[0]["summary"]))
    assert keys[0] == keys[1] == keys[2]
    assert keys[0][0].startswith("err.exec_command.test_failure."), keys
    assert "AssertionError" in keys[0][1]


def test_plain_keeps_words_that_only_look_like_codes():
    from kg.reflect.output_lines import plain

    assert plain("took [1m] to build") == "took [1m] to build"
    assert plain("cache hit ratio [1m ago]") == "cache hit ratio [1m ago]"
    assert plain("\x1b]8;;https://x.dev\x07link\x1b]8;;\x07 \x1b[2K\x1b[1Gdone") == "link done"


def test_a_key_printed_in_colour_is_redacted_like_a_plain_one(ws, run_kg, tmp_path):
    """Review rev8 #5: the codes were stripped after the redaction gate, and a colour code right before an AWS key
    hid it from the rules that want a word boundary there: the hook's summary and the reflected finding held the key,
    and its pattern key was hashed from it. The codes now go before the rules read the output."""
    key = "AKIA" + "QYLPMN5HHHFPZAM2"  # a made-up access key id, not in any fixture
    error = f"Exit code 1\nerror: invalid token \x1b[1m{key}\x1b[0m for this bucket"
    coloured, bare = _hook(run_kg, error, "t4"), _hook(run_kg, CODES.sub("", error), "t5")
    assert key not in json.dumps(coloured) and coloured["pattern_key"] == bare["pattern_key"]
    transcript = tmp_path / "t.jsonl"
    records = [{"type": "assistant", "sessionId": "s9", "uuid": "a1", "timestamp": "2026-12-01T10:00:00Z",
                "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t6", "name": "Bash",
                                                              "input": {"command": "aws s3 ls"}}]}},
               {"type": "user", "sessionId": "s9", "uuid": "u1", "timestamp": "2026-12-01T10:00:01Z",
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t6",
                                                         "is_error": True, "content": error}]}}]
    transcript.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    out = run_kg(["reflect", str(transcript), "--json"])
    assert out.exit_code == 0, out.stderr
    assert any(f["kind"] == "error" for f in out.json["findings"]) and key not in out.stdout
