"""What the user says right after the agent called its work done, in shapes any agent and user produce: the agent's
summary says the fault is gone or its checks pass, and the user still sees the fault, or asks again for what they
asked before. Every turn here is written for the test, none is taken from a labelled transcript."""

from __future__ import annotations

import pytest

from kg.reflect.detect import learnings, turn_signals
from tests.unit.test_reflect_signals import RULES, transcript


def signals(*turns: tuple[str, str]) -> tuple[str, ...]:
    return turn_signals(transcript(*turns), RULES)[len(turns) - 1]


def found(*turns: tuple[str, str]) -> set[str]:
    return {f.category for f in learnings(transcript(*turns), RULES) if f.turn == len(turns) - 1}


ASK = ("user", "the chart legend overlaps the bars on small screens, move it below the chart")


@pytest.mark.parametrize("claim", [
    "Moved the legend into its own row under the plot area. The overlap is gone.",
    "- Legend now renders below the chart.\n- Tests: `npm run test:unit` passed.",
    "Changes:\n- legend placed in a footer row\n- All 14 tests pass",
    "Updated the layout. The build succeeded.",
])
def test_a_summary_saying_the_fault_is_gone_or_the_checks_pass_is_a_claim_of_done(claim):
    assert "claims_done" in signals(ASK, ("assistant", claim), ("user", "ok"))


@pytest.mark.parametrize("not_a_claim", [
    "I moved the legend. Let me know if the tests pass on your machine.",
    "Legend moved below the chart.\nTests: `npm test` ran (2 failed, 12 passed).",
])
def test_a_condition_or_a_count_with_failures_is_no_claim(not_a_claim):
    assert "claims_done" not in signals(ASK, ("assistant", not_a_claim), ("user", "ok"))


def test_still_seeing_the_fault_the_summary_called_gone_is_a_correction():
    turns = (ASK, ("assistant", "Moved the legend into a footer row; the overlap is gone."),
             ("user", "I still see the legend on top of the bars. Is there a way to fix that?"))
    assert "still_after_fix" in signals(*turns)
    assert "correction" in found(*turns)


def test_the_same_request_again_right_after_the_claim_of_done_is_a_correction():
    turns = (ASK, ("assistant", "- Legend moved below the chart.\n- Tests: `npm test` passed."),
             ("user", "The chart legend overlaps the bars on small screens, can you move it below the chart?"))
    sigs = signals(*turns)
    assert "still_after_fix" in sigs and "new_after_done" not in sigs, sigs
    assert "correction" in found(*turns)


def test_a_request_said_again_after_the_agent_asked_for_something_is_an_answer():
    turns = (ASK, ("assistant", "The legend is now below the chart. Could you paste the screen width you test on?"),
             ("user", "The chart legend overlaps the bars on small screens, can you move it below the chart?"))
    assert "still_after_fix" not in signals(*turns)


STEPS = ("assistant", "The tool is not on your PATH. Add this line to your shell config:\n"
                      "```bash\nexport PATH=\"$HOME/.local/bin:$PATH\"\n```\n"
                      "Then open a new shell. You can verify with `which mytool`.")


@pytest.mark.parametrize("said", ["can you do that for me?", "do it for me please", "fais-le pour moi",
                                  "hazlo por mí"])
def test_the_steps_the_agent_left_to_the_user_asked_back_of_it_are_a_correction(said):
    turns = (("user", "install mytool and run its self-check"), STEPS, ("user", said))
    sigs = signals(*turns)
    assert "redirect_after_handback" in sigs and "requests" not in sigs, sigs
    assert "correction" in found(*turns)


def test_do_that_for_me_after_the_agents_offer_accepts_it():
    turns = (("user", "install mytool and run its self-check"),
             ("assistant", "mytool is not on your PATH. Would you like me to add it to your shell config?"),
             ("user", "yes, can you do that for me?"))
    assert "redirect_after_handback" not in signals(*turns)
    assert "correction" not in found(*turns)


ASKED = ("assistant", "I can build the release bundle. Please provide the path to your signing key file.")


@pytest.mark.parametrize("said", ["figure out the key path", "find it", "look it up yourself", "你自己查一下"])
def test_what_the_agent_asked_for_sent_back_to_be_found_is_a_correction(said):
    turns = (("user", "build the release bundle"), ASKED, ("user", said))
    sigs = signals(*turns)
    assert "redirect_after_handback" in sigs and "answers_agent" not in sigs, sigs
    assert "correction" in found(*turns)


def test_the_answer_the_agent_asked_for_is_no_correction():
    turns = (("user", "build the release bundle"), ASKED, ("user", "~/keys/release.jks"))
    assert "redirect_after_handback" not in signals(*turns)
    assert "correction" not in found(*turns)


def test_a_polite_request_with_its_own_object_is_still_a_request():
    assert "requests" in signals(("user", "hi"), ("assistant", "Hello!"), ("user", "can you do the footer next?"))


DONE = ("assistant", "- Reworked the date header.\n- Tests: `./gradlew test` passed.\nChanges are committed.")


@pytest.mark.parametrize("said", ["Did you install it on the phone?", "How long did it take? Did you deploy it?",
                                  "你有没有部署？"])
def test_a_question_about_a_step_the_claim_of_done_never_names_is_a_correction(said):
    turns = (("user", "make the date header smaller"), DONE, ("user", said))
    sigs = signals(*turns)
    assert "asks_skipped_step" in sigs, sigs
    assert "correction" in found(*turns)


@pytest.mark.parametrize("agent, said", [
    (DONE[1], "did you run the tests?"),  # the claim names the tests
    ("Installed the new build on the phone; the header is smaller now.", "did you install it on the phone?"),
    ("已部署到服务器，页面已经更新。", "你部署了吗？"),
])
def test_a_question_about_a_step_the_agent_reported_skips_nothing(agent, said):
    assert "skipped_step" not in signals(("user", "make the date header smaller"), ("assistant", agent),
                                         ("user", said))


def test_a_step_its_tool_calls_show_is_not_skipped_and_one_they_do_not_show_is():
    work = (("user", "make the date header smaller"), ("assistant", "", "edit", "src/header.kt"),
            ("assistant", "", "bash", "./gradlew test"), ("assistant", "The header is smaller."))
    assert "skipped_step" not in signals(*work, ("user", "did you run the tests?"))
    assert "asks_skipped_step" in signals(*work, ("user", "did you install it on the phone?"))
