"""A failure that recurs becomes a rule only when the rule says what to do differently (rules/lifecycle.toml
promotion.instruction), and a failure's output that says what to do becomes its suggested fix
(rules/errors.toml lines.advice). Pure."""

from __future__ import annotations

import pytest

from kg.core.policy import packaged
from kg.lifecycle import promote
from kg.lifecycle.policy import LifecyclePolicy
from kg.reflect.failures import analyse, load_rules

LP = LifecyclePolicy.from_mapping(packaged("lifecycle"))
RULES = load_rules(packaged("errors"))


def cand(summary: str, *, action: str | None = None, tags: tuple[str, ...] = ("tool-failure", "edit")):
    return promote.Candidate(pattern_id="p", key="err.x", summary=summary, recurrence=5, sessions=3, action=action,
                             tags=tags)


def why(c: promote.Candidate) -> str:
    return promote.says_nothing_to_do(c, promote.plan(c, LP).text, LP)


@pytest.mark.parametrize("summary", [
    "edit failed: # 1 SEARCH/REPLACE block failed to match!",
    "Edit failed: String to replace not found in file.",
    "`git push` failed: fatal: The current branch fix/x has no upstream branch.",
    "read failed: ENOENT: no such file or directory, access '/home/a/MEMORY.md'",
    "`npm test` failed: exit code 1 (no output)",
])
def test_a_failure_that_only_says_what_failed_waits(summary):
    assert "not what to do" in why(cand(summary))


@pytest.mark.parametrize(("summary", "action"), [
    ("Edit failed: File has not been read yet. Read it first before writing to it.", None),
    ("`git commit` failed: [FORMAT] Code is not formatted.",
     "[FORMAT] Code is not formatted. Run 'mix format' to fix."),
    ("`git push` failed: fatal: no upstream branch.", "Push with -u origin <branch> the first time"),  # a logged fix
    ("edit failed: The SEARCH section must exactly match an existing block of lines", None),
])
def test_a_failure_that_says_what_to_do_is_promoted(summary, action):
    assert why(cand(summary, action=action)) == ""


def test_other_patterns_are_not_held_to_it():
    assert why(cand("The deploy script needs the staging flag", tags=("reflect",))) == ""
    assert why(cand("Correction: wrong folder", tags=())) == ""


@pytest.mark.parametrize(("output", "advice"), [
    ("Exit code 1\nPre-commit validation failed:\n\n[FORMAT] Code is not formatted.\nRun 'mix format' to fix.\n",
     "Run 'mix format' to fix."),
    ("Exit code 1\nerror: failed to push some refs to 'origin'\nhint: Updates were rejected because the remote "
     "contains work that you do not have locally.", "hint: Updates were rejected because the remote contains work "
     "that you do not have locally."),
    # a runner's footer further down, a link, a line of code and a short word are no advice on this failure
    ("Exit code 1\nerror: x is too complex\n  lib/a.ex:3\n\nPlease report incorrect results: https://x.org/issues\n",
     ""),
    ("String to replace not found in file.\nString: try do", ""),
    ("Exit code 1\nerror: cannot run\nuse it", ""),
])
def test_the_tools_advice_becomes_the_suggested_fix(output, advice):
    f = analyse("Bash", output, "git commit -m x", RULES)
    assert f.advice == advice
    assert f.lesson() == (f"{f.line} {advice}" if advice else None)
