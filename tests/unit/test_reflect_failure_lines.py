"""What a failure entry names as the cause, and which tool results are not failures at all, on real transcripts
(tests/conftest.py `shared_data`) and on the shapes they show, pure."""

from __future__ import annotations

import pytest

from kg.core.policy import packaged
from kg.reflect.failures import analyse, failure_of_payload, failures, load_rules
from kg.reflect.parse import Transcript, Turn, read_transcript

RULES = load_rules(packaged("errors"))
CC = "runtimes/claude_code/transcripts/"


def found(shared_data, name):
    return failures(read_transcript(shared_data / name), RULES)


def test_a_header_gives_way_to_the_cause_on_the_next_line(shared_data):
    # Claude Code's Task tool: "InputValidationError: Task failed due to the following issue:\nThe required ..."
    got = found(shared_data, CC + "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl").found
    task = next(f for f in got if f.tool == "Task")
    assert task.line == "The required parameter `prompt` is missing"
    assert task.summary(120) == "Task failed: The required parameter `prompt` is missing"
    assert task.error_class == "invalid_input"


def test_a_generic_build_error_gives_way_to_the_error_it_reports(shared_data):
    got = found(shared_data, CC + "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl").found
    builds = [f for f in got if f.command == "npm run build"]
    assert builds and {f.line for f in builds} == {"[TypeError: generate is not a function]"}
    assert {f.error_class for f in builds} == {"type_error"}
    # the pipeline ending in `xargs grep -l` answered "Error" (Claude Code's word for: no output, non-zero)
    assert not [f for f in got if f.command and "xargs grep" in f.command]


def test_a_search_that_finds_nothing_is_not_a_failure(shared_data):
    pi = found(shared_data, "runtimes/openclaw/transcripts/pi-coding-agent/large-session.jsonl")
    assert pi.answers >= 10
    assert not [f for f in pi.found if f.exit_only]
    # a search that could not read its file did fail, and stays
    assert any(f.command.startswith("grep ") and "No such file" in f.line for f in pi.found)
    codex = found(shared_data, "runtimes/codex/transcripts/"
                  "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
    assert codex.answers == 2 and [f.command.split()[0] for f in codex.found] == ["rg", "npm"]


def test_a_test_run_names_the_assertion_not_the_file_summary(shared_data):
    codex = found(shared_data, "runtimes/codex/transcripts/"
                  "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
    assert codex.found[-1].line.startswith("AssertionError: ")


@pytest.mark.parametrize(("output", "line"), [
    ("Exit code 1\nInputValidationError: Task failed due to the following issue:\n"
     "The required parameter `x` is missing",
     "The required parameter `x` is missing"),
    ("Exit code 1\n> Build error occurred\n[TypeError: x is not a function]", "[TypeError: x is not a function]"),
    ("Exit code 1\nError: Command failed: npm test\nnpm warn config\nError: Cannot find module 'y'",
     "Error: Cannot find module 'y'"),
    ("Exit code 1\n  1) test saves a draft (App.DraftTest)\n     test/draft_test.exs:12\n"
     "     Assertion with == failed\n     code: assert x == 1", "Assertion with == failed"),
    ("Exit code 2\nTraceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    main()\n"
     "KeyError: 'user'", "KeyError: 'user'"),
    ("Exit code 1\nError: Exit code 1", ""),
    ("Exit code 1\nError", ""),
    ("Exit code 1\nsomething went sideways:", "something went sideways"),  # a header with nothing after it
])
def test_the_cause_line(output, line):
    f = analyse("Bash", output, "make", RULES)
    assert f.line == line and f.exit_only is (not line)
    assert f.summary(200) == f"`make` failed: {line or 'exit code 1 (no output)'}"


@pytest.mark.parametrize(("command", "code", "answer"), [
    ("rg -n foo src/", 1, True),
    ("grep -n foo a.txt | head -5", 1, True),
    ("cd pkg && grep -c foo a.txt", 1, True),
    ("find . -name '*.ts' | xargs grep -l useX 2>/dev/null", None, True),
    ("diff a.txt b.txt", 1, True),
    ("test -f build/out.js", 1, True),
    ("[ -d node_modules ]", 1, True),
    ("git diff --quiet HEAD -- src", 1, True),
    ("/usr/bin/grep foo a", 1, True),
    ("grep foo a.txt", 2, False),      # exit 2 is grep's own error
    ("npm test", 1, False),            # a test run that printed nothing did fail
    ("git diff HEAD", 1, False),
    ("./check.sh", 1, False),
])
def test_which_silent_exits_are_answers(command, code, answer):
    text = "" if code is None else f"Exit code {code}"
    t = Transcript("claude-code", (Turn(0, "assistant", "", tool_name="Bash", tool_input=command, call_id="c"),
                                   Turn(1, "tool", text or "Error", tool_name="Bash", tool_input=command,
                                        is_error=True, call_id="c", exit_code=code)))
    got = failures(t, RULES)
    assert (got.answers, len(got.found)) == ((1, 0) if answer else (0, 1))
    assert (failure_of_payload("Bash", text or "Error", command, RULES, exit_code=code) is None) is answer


def test_a_search_with_output_still_fails():
    f = failure_of_payload("Bash", "Exit code 1\ngrep: a.txt: No such file or directory", "grep x a.txt", RULES)
    assert f is not None and f.error_class == "file_not_found"


def test_a_call_the_user_stopped_after_it_printed_is_declined():
    out = "Debugger attached.\n" + "> pkg@1.0.0 test\n> node --test\n" * 20 + "\n\nCommand aborted"
    t = Transcript("openclaw", (Turn(0, "assistant", "", tool_name="bash", tool_input="npm test", call_id="c"),
                                Turn(1, "tool", out, tool_name="bash", tool_input="npm test", is_error=True,
                                     call_id="c")))
    got = failures(t, RULES)
    assert got.found == () and got.declined == 1


def test_editor_tools_share_one_key_for_one_mistake():
    said = "File has not been read yet. Read it first before writing to it."
    keys = {analyse(tool, said, "/repo/a.py", RULES).pattern_key for tool in ("Edit", "MultiEdit", "Write")}
    assert len(keys) == 1 and keys.pop().startswith("err.edit.read_before_write.")
    assert analyse("Read", said, "/repo/a.py", RULES).pattern_key.startswith("err.read.")


@pytest.mark.parametrize(("tool", "command", "output", "summary"), [
    # what ran gives way to the cause: a long command is cut, a path keeps its file
    ("exec_command", 'rg -n "compact|compaction|summary|context" node_modules/opencode-ai --glob "!**/*.map"',
     "Exit code 2\nrg: node_modules/opencode-ai: No such file or directory (os error 2)",
     '`rg -n "compact|compaction|summary…` failed: rg: node_modules/opencode-ai: No such file or directory '
     '(os error 2)'),
    ("Edit", "/path/to/Demo/todo-app/src/hooks/useTodos.test.ts",
     "File has not been read yet. Read it first before writing to it.",
     "Edit `…Demo/todo-app/src/hooks/useTodos.test.ts` failed: File has not been read yet. Read it first before "
     "writing to it."),
    # where it ran is the entry's context, not its summary
    ("Bash", "cd packages/app && npm run check", "Exit code 2\nsrc/a.ts(28,2): error TS2739: Type 'X' is missing",
     "`npm run check` failed: src/a.ts(28,2): error TS2739: Type 'X' is missing"),
])
def test_the_summary_keeps_the_cause_whole(tool, command, output, summary):
    f = analyse(tool, output, command, RULES)
    assert f.summary(120) == summary and len(summary) <= 120


def test_what_ran_is_cut_where_a_word_or_a_path_segment_ends(shared_data):
    """Real summaries cut "…me/node/.openclaw/…" and `git commit -m "f…` mid-word: an agent reading the entry cannot
    tell which file or command it was. The cut falls at a path separator or a word's end."""
    rows = [*found(shared_data, "runtimes/openclaw/transcripts/f967d602-325a-4a45-8d54-ee17484cfd96.jsonl").found,
            *found(shared_data, "transcripts/claude_code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl.gz").found]
    what = [f.summary(RULES.summary_chars).split("` failed:")[0] for f in rows]
    cut = [(w.split("`", 1)[1], " ".join(f.command.split())) for w, f in zip(what, rows, strict=True) if "…" in w]
    assert cut, what
    for w, ran in cut:
        head, _, tail = w.partition("…")
        if tail:  # a path's end: it starts at a separator or with a whole segment
            at = ran.rindex(tail.lstrip("/\\"))
            assert at == 0 or ran[at - 1] in "/\\", (w, ran)
        else:  # a command's start: it ends where a word of the command ends
            assert ran.startswith(head) and not ran[len(head)].isalnum(), (w, ran)
    assert "read `…/node/.openclaw/workspace/memory/2026-02-27.md" in what
    assert not any(w.rstrip("…").endswith('-m "f') for w, _ in cut)


@pytest.mark.parametrize(("text", "width", "short"), [
    ('git add -A && git commit -m "fix: the parser"', 30, "git add -A && git commit -m…"),
    ("mix test test/spotter_web/live/x_test.exs", 24, "mix test test/…"),
    ("abcdefghijklmnopqrstuvwxyz0123456789", 20, "abcdefghijklmnopqrs…"),  # no word end in reach: cut as before
])
def test_a_long_command_is_cut_after_a_whole_word(text, width, short):
    from kg.reflect.failures import _short

    assert _short(text, width) == short


def test_the_error_text_starts_near_the_cause_without_noise():
    out = ("Exit code 1\nnpm warn Unknown env config \"store-dir\".\n\n> app@1.0.0 test\n> vitest --run\n\n"
           + "".join(f" ✓ src/t{i}.test.ts (3 tests) 12ms\n" for i in range(40))
           + "⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯\n\n FAIL src/a.test.ts > saves\nAssertionError: expected 1 to be 2\n"
           + " ❯ src/a.test.ts:12:5\n")
    f = analyse("Bash", out, "npm test", RULES)
    assert f.line == "AssertionError: expected 1 to be 2"
    assert f.error.splitlines()[-2:] == ["AssertionError: expected 1 to be 2", " ❯ src/a.test.ts:12:5"]
    assert "npm warn" not in f.error and "src/t0.test.ts" not in f.error and len(f.error.splitlines()) <= 6
    assert "Command:" not in f.details() and f.command == "npm test"


def test_a_check_runners_section_label_gives_way_to_its_first_finding(shared_data):
    # A pre-commit script running credo and dialyzer: "[CREDO]" alone says which check failed, not why
    got = found(shared_data, "transcripts/claude_code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl.gz").found
    checks = [f for f in got if f.line.startswith(("[CREDO]", "[DIALYZER]"))]
    assert len(checks) == 7
    assert all(len(f.line.split()) > 4 for f in checks), [f.line for f in checks]
    credo = next(f for f in checks if f.line.startswith("[CREDO]"))
    assert "complex" in credo.line and "┃" not in credo.line
    dialyzer = next(f for f in checks if f.line.startswith("[DIALYZER]"))
    assert ".ex:" in dialyzer.line and "pattern can never match" in dialyzer.line  # the message under the location
    assert "pattern can never match" in dialyzer.error[:600]  # the evidence starts near the finding


@pytest.mark.parametrize(("output", "line"), [
    ("checks failed:\n[LINT]\nrunning 3 linters\n", "[LINT]"),  # no finding in its section: the label stays
    ("[TYPES]\nsrc/a.py:3: error: Name 'x' is not defined\n[LINT]\nok", "src/a.py:3: error: Name 'x' is not defined"),
    ("checks failed:\n[LINT]\nsrc/b.ts:4:2:no-explicit-any\n  Unexpected any. Specify a different type.\n[TYPES]\nok",
     "[LINT] src/b.ts:4:2:no-explicit-any Unexpected any. Specify a different type."),
])
def test_a_section_label_and_its_finding(output, line):
    assert analyse("Bash", "Exit code 1\n" + output, "make check", RULES).line == line


def test_an_error_named_in_camel_case_is_the_cause(shared_data):
    # newer aider: "# 1 SEARCH/REPLACE block failed to match!" counts, "SearchReplaceNoExactMatch: ..." names the file
    got = found(shared_data, "runtimes/aider/aquaticat_monochromatic/.aider.chat.history.md").found
    edits = [f for f in got if f.error_class == "edit_no_match"]
    assert edits and all(f.line.startswith("SearchReplaceNoExactMatch: ") for f in edits)
    assert {f.line.rsplit(" ", 1)[-1] for f in edits} >= {"CONVENTIONS.md"}


def test_a_build_error_after_hundreds_of_progress_lines_is_the_cause():
    """Only the output's first `scan_lines` × 4 lines were read: a cargo build whose 400 "Compiling" lines came
    first was "failed: exit code 1 (no output)", and every such failure of the tool shared one pattern key. The
    tail is read too."""
    progress = "\n".join(f"   Compiling dep{i} v0.1.{i}" for i in range(400))
    body = (f"Exit code 1\n{progress}\nerror[E0425]: cannot find value `total` in this scope\n --> src/main.rs:3:5\n"
            "error: could not compile `app` (bin \"app\") due to 1 previous error")
    failure = analyse("Bash", body, "cargo build", RULES)
    assert failure.line == "error[E0425]: cannot find value `total` in this scope"
    assert not failure.exit_only and "error[E0425]" in failure.error
    short = analyse("Bash", body.replace(progress + "\n", ""), "cargo build", RULES)
    assert short.line == failure.line and short.pattern_key == failure.pattern_key


@pytest.mark.parametrize("passed", [100, 250, 600])
def test_a_test_run_s_failure_after_its_passing_lines_is_the_cause(passed):
    """The tail was cut to its first lines, not its last, and an output of 81-320 lines had no tail at all (the
    reviewer's find): a pytest -v run's failure after its PASSED lines gave 'tests/...::test_0 PASSED' as the cause."""
    lines = "\n".join(f"tests/test_m.py::test_{i} PASSED [{i % 100:3d}%]" for i in range(passed))
    body = (f"Exit code 1\n{lines}\n{'=' * 30} FAILURES {'=' * 30}\n___ test_parse ___\n    def test_parse():\n"
            '>       assert parse("x") == 1\nE       AssertionError: assert 2 == 1\n'
            f"tests/test_m.py:10: AssertionError\n=== 1 failed, {passed} passed ===")
    assert analyse("Bash", body, "pytest -v", RULES).line == "E       AssertionError: assert 2 == 1"


def test_a_bundler_s_error_after_its_asset_lines_is_the_cause():
    assets = "\n".join(f"asset chunk-{i}.js 12 KiB [emitted]" for i in range(500))
    body = f"{assets}\nERROR in ./src/index.js 3:0-24\nModule not found: Error: Can't resolve './missing' in '/app/src'"
    assert analyse("Bash", body, "npx webpack", RULES).line == (
        "Module not found: Error: Can't resolve './missing' in '/app/src'")


@pytest.mark.parametrize("name", ["aider-ai_aider/chat-history.part1.md",
                                  "aquaticat_monochromatic/.aider.chat.history.md"])
def test_an_aider_failed_edit_is_placed_on_the_line_that_says_it(shared_data, name):
    """A failed edit's position was aider's `> Tokens:` line, 1-7 lines above the failure it reports (32 of the
    real history's failed edits); it is aider's own failure message. Its turn keeps the block's first line (turns
    stay in file order for incremental reads)."""
    path = shared_data / "runtimes/aider" / name
    lines = path.read_text(encoding="utf-8").splitlines()
    got = failures(read_transcript(path), RULES).found
    assert len(got) > 5
    for f in got:
        said = lines[int(f.position.split()[1]) - 1]
        assert said.startswith("> ") and ("failed to match" in said or "did not conform" in said), (f.position, said)
