"""What the user cannot do with the agent's result or finds missing in it ("it won't let me ...", "nothing in the
list", "the problem is that ..."), said right after the agent said it was done: a problem reported after the claim
(`fails_after_claim`, evidence the model weighs; alone it makes no finding). And a step the user stopped because it
was not needed ("you don't need to do that"): a redirect after the interrupt, a correction. Every turn here is
written for the test, none is taken from a labelled transcript."""

from __future__ import annotations

import pytest

from kg.reflect.detect import learnings, turn_signals
from tests.unit.test_reflect_signals import RULES, transcript

ASK = ("user", "add an export button to the report toolbar")
DONE = ("assistant", "I've added the export button to the toolbar. It should work correctly now.")


@pytest.mark.parametrize("said", [
    "we can't find the export button anywhere",
    "the toolbar doesn't let me click it",
    "there are rows in the database but nothing in the report",
    "the problem is that the file it saves is empty",
])
def test_what_the_user_cannot_do_or_finds_missing_after_the_claim_is_a_problem_after_it(said):
    sigs = turn_signals(transcript(ASK, DONE, ("user", said)), RULES)[2]
    assert "problem_report" in sigs and "fails_after_claim" in sigs


@pytest.mark.parametrize("said", [
    "i can't wait to try it",
    "we don't need to hurry, take your time",
    "can you add a second button for csv as well?",
])
def test_other_words_with_cant_or_no_need_are_not_a_shortfall(said):
    sigs = turn_signals(transcript(ASK, DONE, ("user", said)), RULES)[2]
    assert "problem_report" not in sigs and "not_asked" not in sigs


def test_a_step_stopped_as_not_needed_redirects_the_agent():
    t = transcript(("user", "bump the parser to the version in our fork"),
                   ("assistant", "", "WebFetch", "https://example.org/parser/releases"),
                   ("user", "[Request interrupted by user for tool use]"),
                   ("user", "you don't need to do that, the fork is checked out in ../parser"))
    sigs = turn_signals(t, RULES)[3]
    assert "not_asked" in sigs and "redirect_after_interrupt" in sigs
    assert "correction" in {f.category for f in learnings(t, RULES) if f.turn == 3}


def test_praise_with_a_problem_after_the_claim_is_a_correction():
    t = transcript(ASK, DONE, ("user", "nice, almost there. the export doesn't let me pick a folder"))
    sigs = turn_signals(t, RULES)[2]
    assert "praise" in sigs and "fault_after_praise" in sigs
    assert "correction" in {f.category for f in learnings(t, RULES) if f.turn == 2}


@pytest.mark.parametrize("said", ["nice, that works. now add a print button next to it",
                                  "great job! can you also handle the empty report case?"])
def test_praise_and_the_next_request_is_not_a_correction(said):
    t = transcript(ASK, DONE, ("user", said))
    assert "fault_after_praise" not in turn_signals(t, RULES)[2]
    assert "correction" not in {f.category for f in learnings(t, RULES) if f.turn == 2}


@pytest.mark.parametrize("prev", [
    "I added logging around the request and the render. Try exporting a report and check the console.",
    "The handler now writes the file. Test it again with the big report.",
])
def test_an_agent_ending_by_telling_the_user_to_try_hands_the_work_back(prev):
    assert "hands_back" in turn_signals(transcript(ASK, ("assistant", prev), ("user", "ok")), RULES)[2]


def test_telling_the_user_to_try_mid_reply_is_not_handing_back():
    prev = "Try exporting first. I checked the handler: it writes the file to the temp folder."
    assert "hands_back" not in turn_signals(transcript(ASK, ("assistant", prev), ("user", "ok")), RULES)[2]
