"""Issue 14: a claim of done said the way Copilot's agent sums up ("- Fix the crash — **Done** (...)") or as "no
further changes are needed".
Every sentence here is written for this test; none is a labelled turn."""

from __future__ import annotations

import pytest

from tests.unit.test_reflect_unseen_users import signals

OK = "ok"


@pytest.mark.parametrize("claim", [
    "## Requirements coverage\n- Fix the crash on save — **Done** (guarded the null path).",
    "- Pagination bug: **Fixed**\n- Sorting: **Completed**",
    "The header is defined in layout.html. No further changes are needed.",
    "That is the only file involved; no additional code changes are required.",
])
def test_a_bold_verdict_or_no_work_left_is_a_claim_of_done(claim):
    assert "claims_done" in signals(claim, OK)


@pytest.mark.parametrize("not_a_claim", [
    "Which of these is **done** already on your side?",
    "Before we continue: are further changes needed in the API?",
])
def test_a_bold_word_in_a_question_or_a_question_of_work_left_is_no_claim(not_a_claim):
    assert "claims_done" not in signals(not_a_claim, OK)
