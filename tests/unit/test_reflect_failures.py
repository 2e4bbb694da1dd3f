"""Failure signatures that recur when the mistake recurs (rules/errors.toml), pure."""

from __future__ import annotations

import pytest

from kg.core.errors import RulesError
from kg.core.policy import packaged
from kg.reflect.failures import analyse, area_of, failures, load_rules
from kg.reflect.parse import Transcript, Turn

RULES = load_rules(packaged("errors"))


def key(tool: str, text: str, command: str | None = None) -> str:
    return analyse(tool, text, command, RULES).pattern_key


@pytest.mark.parametrize(("a", "b"), [
    # branch names (the README's own `git push` example)
    ("fatal: The current branch feat/login has no upstream branch.",
     "fatal: The current branch fix/JIRA-12_typo has no upstream branch."),
    # paths, line numbers, hashes, temp names, durations
    ("src/a.py:12: error: Name 'x' is not defined", "lib/b/c.py:340: error: Name 'y' is not defined"),
    ("error: commit 3f2a9c1d4e not found", "error: commit 0badcafe12 not found"),
    ("FileNotFoundError: /tmp/tmpa8x_2k/out.json", "FileNotFoundError: /tmp/tmpZZ91q/out.json"),
    ("Error: timed out after 30s", "Error: timed out after 2.5 seconds"),
    ("! [rejected] main -> main (fetch first)\nerror: failed to push some refs to 'origin/main'",
     "! [rejected] dev -> dev (fetch first)\nerror: failed to push some refs to 'origin/dev'"),
])
def test_the_same_mistake_gets_one_key(a, b):
    assert key("Bash", "Exit code 1\n" + a, "git push") == key("Bash", "Exit code 1\n" + b, "git push")


@pytest.mark.parametrize(("a", "b"), [
    ("Exit code 1\nbash: foo: command not found", "Exit code 127\nbash: foo: command not found"),
    ("Error: cannot open /home/ann/proj/a.txt at line 12", "Error: cannot open /srv/other/b.txt at line 99"),
    ("KeyError: id 3f2a9c1b-0000-4000-8000-0123456789ab", "KeyError: id 9b2a9c1b-1111-4000-8000-0123456789ff"),
    ("failed to fetch 'alpha' after 3 tries", 'failed to fetch "beta" after 5 tries'),
])
def test_the_same_failure_in_another_folder_gets_one_key(a, b):
    assert key("Bash", a, "foo --x") == key("Bash", b, "cd /tmp && foo --y")


@pytest.mark.parametrize(("text", "flag", "expected"), [
    ("Exit code 1\nboom", True, True),
    ("all good", False, False),
    ("Exit code 1\nboom", False, False),  # the transcript's flag is trusted
    ("Traceback (most recent call last):\n  File 'x'\nKeyError: 'a'", None, True),
    ("bash: foo: command not found", None, True),
    ("request timed out after 30s", None, True),
    ("curl: (7) Failed to connect: Connection refused", None, True),
    ("3 files changed", None, False),
    ("The user doesn't want to proceed with this tool use.", True, False),
])
def test_what_counts_as_a_failure(text, flag, expected):
    t = Transcript("claude-code", (Turn(0, "user", "do it"), Turn(1, "assistant", "", tool_name="Bash", tool_input="x"),
                                   Turn(2, "tool", text, tool_name="Bash", tool_input="x", is_error=flag)))
    assert bool(failures(t, RULES).found) is expected


def test_different_mistakes_differ():
    assert key("Bash", "fatal: no upstream branch", "git push") != key("Bash", "error: not formatted", "mix format")
    assert key("Bash", "error: x", "git push") != key("Edit", "error: x", "a.py")
    assert key("Bash", "fatal: not a git repository", "git status") != key("Bash", "fatal: not a git repository",
                                                                          "hg status")
    assert key("Read", "File does not exist.").startswith("err.read.file_not_found.")


@pytest.mark.parametrize(("text", "cls"), [
    ("===== 1 failed, 20 passed in 0.52s =====", "test_failure"),
    ("FAILED tests/test_a.py::test_x - AssertionError: 1 != 2", "test_failure"),
    (" ❯ src/a.test.ts (16 tests | 1 failed | 15 skipped) 1316ms", "test_failure"),
    ("psql: error: connection to server at \"10.0.0.1\", port 5432 failed: Connection refused", "connection"),
    ("fatal: The current branch x has no upstream branch.", "git_no_upstream"),
    ("zsh:1: operation not permitted: ps", "permission_denied"),
    ("", "nonzero_exit"),
])
def test_classes(text, cls):
    assert analyse("Bash", "Exit code 1\n" + text, "pytest", RULES).error_class == cls


@pytest.mark.parametrize(("command", "area"), [
    ("git add tests/test_login.py", "infra"),       # a file name with "test" in it is not a test run
    ("cd app && npm test -- --run", "tests"),
    ("python -m pytest -q tests/", "tests"),
    ("FOO=1 cargo build --release", "backend"),
    ("npm run build", "frontend"),
    ("ls -la tests/", "tooling"),
    ("./deploy.sh", None),
])
def test_area_from_the_command(command, area):
    assert area_of("Bash", command, RULES) == area


def test_area_of_editor_tools():
    assert area_of("Edit", "/repo/tests/test_x.py", RULES) == "tooling"


@pytest.mark.parametrize(("output", "line"), [
    ("Exit code 1\nCompiling 40 files (.ex)\nGenerated app app\n** (CompileError) lib/a.ex:3: undefined function x/0",
     "** (CompileError) lib/a.ex:3: undefined function x/0"),
    ("Exit code 101\n   Compiling serde v1.0.1\n   Compiling app v0.1.0\nerror[E0425]: cannot find value `x`",
     "error[E0425]: cannot find value `x`"),
    ("Exit code 1\nnpm warn Unknown env config \"store-dir\".\n\n> app@1.0.0 lint\n> eslint .\n\n"
     "/repo/a.js\n  3:1  error  'x' is not defined  no-undef", "3:1  error  'x' is not defined  no-undef"),
])
def test_build_noise_is_skipped(output, line):
    f = analyse("Bash", output, "make", RULES)
    assert f.line == line and not f.exit_only and "Exit code" not in f.summary(200)


def test_an_exit_code_alone_is_flagged_and_low():
    f = analyse("Bash", "Exit code 1\n", "grep -n x a.txt", RULES)
    assert f.exit_only and f.priority == "low" and RULES.exit_only_tag in f.tags(RULES)
    assert f.summary(120) == "`grep -n x a.txt` failed: exit code 1 (no output)"


def turns(*results: tuple[str, str, str | None]) -> Transcript:
    out = []
    for tool, text, command in results:
        n = len(out)
        out.append(Turn(n, "assistant", "", tool_name=tool, tool_input=command, call_id=f"c{n}"))
        out.append(Turn(n + 1, "tool", text, tool_name=tool, tool_input=command, is_error=True, call_id=f"c{n}",
                        position=f"line {n + 1}", line=n + 1))
    return Transcript("claude-code", tuple(out))


def test_cascades_collapse_into_their_root():
    t = turns(("Bash", "Exit code 2\nmake: *** [all] Error 2", "make"),
              *[("Read", "<tool_use_error>Sibling tool call errored</tool_use_error>", "a.py")] * 7)
    got = failures(t, RULES)
    assert len(got.found) == 1 and got.found[0].cascaded == 7 and got.cascades == 7


def test_declined_and_interrupted_calls_are_not_failures():
    t = turns(("Bash", "The user doesn't want to proceed with this tool use.", "rm -rf build"),
              ("bash", "Command aborted", "sleep 100"))
    assert failures(t, RULES).found == () and failures(t, RULES).declined == 2


def test_past_the_cap_the_most_severe_stay():
    many = [("Read", f"File does not exist: /r/f{i}.txt", f"/r/f{i}.txt") for i in range(RULES.max_per_session)]
    late = [("Bash", "fatal: The current branch x has no upstream branch.", "git push"),
            ("Bash", "error: failed to push some refs to 'origin/main'", "git push")]
    got = failures(turns(*many, *late), RULES)
    assert got.dropped_by_cap == 2
    assert {f.error_class for f in got.found} >= {"git_no_upstream", "git_rejected"}
    assert [f.turn for f in got.found] == sorted(f.turn for f in got.found)


def test_repeats_in_one_session_raise_the_priority():
    got = failures(turns(*[("Bash", "Exit code 1\nerror: not formatted lib/a.ex", "mix format --check")] * 3),
                   RULES)
    assert [f.priority for f in got.found] == [RULES.repeat_priority] * 3


def test_rules_refuse_unknown_keys_and_bad_regexes():
    with pytest.raises(RulesError, match="nope"):
        load_rules({**packaged("errors"), "nope": 1})
    bad = packaged("errors")
    bad = {**bad, "lines": {**bad["lines"], "salient": "("}}
    with pytest.raises(RulesError, match="salient"):
        load_rules(bad)


def test_unrelated_failures_do_not_share_a_key():
    """The issue's three failures in three sessions (once one near-duplicate pattern "... failed: Exit code 1")."""
    calls = [("npm test", "Exit code 1\n> app@1.0.0 test\n> jest\n\nFAIL src/a.test.js\nTests: 1 failed, 9 passed"),
             ("cargo build --release", "Exit code 101\n   Compiling app v0.1.0\nerror[E0308]: mismatched types"),
             ("make lint", "Exit code 2\nruff check .\nsrc/a.py:1:1: F401 `os` imported but unused\nFound 1 error.")]
    got = [analyse("Bash", out, cmd, RULES) for cmd, out in calls]
    assert len({f.pattern_key for f in got}) == 3
    assert [f.line for f in got] == ["FAIL src/a.test.js", "error[E0308]: mismatched types",
                                     "src/a.py:1:1: F401 `os` imported but unused"]
    assert [f.area for f in got] == ["tests", "backend", "backend"]


def test_a_failures_call_id_is_not_taken_for_a_secret():
    # Claude Code's tool-use ids look random; under a plain "Tool call:" label the redaction took every one for a
    # secret, and each failure entry said "[REDACTED:high_entropy_secret]" and carried a redaction tag
    from kg.redaction.redact import load_default

    t = turns(("Bash", "Exit code 2\nmake: *** [all] Error 2", "make"))
    f = failures(t, RULES).found[0]
    f = type(f)(**{**f.__dict__, "call_id": "toolu_01NG5xYz8QwErTyUiOpAsDfG"})
    assert "toolu_01NG5xYz8QwErTyUiOpAsDfG" in f.details()
    assert load_default().redact(f.details()).kinds == ()


@pytest.mark.parametrize("command, answer", [
    ("rg TODO src", True),
    ("cd web && grep -rq TODO src", True),  # where it ran is not a part that can fail
    ("npm ci && cat log | grep -c ERROR", False),
    ("grep -q a x && grep -q b x", True),
    ("cat log | grep -c ERROR", True),
    ("npm run build >/dev/null 2>&1; test -f dist/index.js", True),  # only the last command's status counts
    # review: a search after the real work does not make its failure an answer
    ("pytest -q > out.txt 2>&1 && grep -q passed out.txt", False),
    ("make deploy > deploy.log 2>&1 || grep -c ERROR deploy.log", False),
    ("rg TODO src; npm test", False),
])
def test_only_the_command_whose_status_is_returned_can_be_an_answer(command, answer):
    from kg.reflect.failures import Failure, is_answer
    f = Failure(tool="Bash", command=command, line="", error="", exit_code=1, error_class="exit", pattern_key="k",
                area=None, exit_only=True, severity=1, priority="low")
    assert is_answer(f, RULES) is answer


# The class comes from the error, never from the names it is about (real collisions: "ModuleNotFoundError" held
# "eNotFound", which the case-insensitive errno ENOTFOUND matched; a package, branch or file named like a class).
@pytest.mark.parametrize(("text", "cls"), [
    ("ModuleNotFoundError: No module named requests", "module_not_found"),
    ("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    import requests\n"
     "ModuleNotFoundError: No module named 'requests'", "module_not_found"),
    ("ModuleNotFoundError: No module named pre-commit", "module_not_found"),
    ("ImportError: cannot import name 'TimeoutError' from 'asyncio'", "module_not_found"),
    ("error: pathspec 'pre-commit hook failed' did not match any file(s) known to git", "exception"),
    ("cat: 'permission denied.md': No such file or directory", "file_not_found"),
    ("RouteNotFoundError: no route for GET /x", "exception"),
    ("Error: getaddrinfo ENOTFOUND registry.example.org", "connection"),
    ("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='x', port=443)", "connection"),
    ("PermissionError: [Errno 13] Permission denied: '/etc/x'", "permission_denied"),
    ("  File \"a.py\", line 3\n    def f(:\n          ^\nSyntaxError: invalid syntax", "syntax_error"),
    ("[TypeError: generate is not a function]", "type_error"),
    ("husky - pre-commit script failed (code 2)", "hook_failed"),
    ("Pre-commit validation failed:\n\n[FORMAT] Code is not formatted.", "hook_failed"),
    ("ERROR: Could not find a version that satisfies the requirement pre-commit", "exception"),
])
def test_the_class_is_the_errors_not_its_arguments(text, cls):
    assert analyse("Bash", "Exit code 1\n" + text, "python a.py", RULES).error_class == cls
