"""What any user says when the agent's fix did not do it, and what only looks like it: the result reported after a
change the agent stated as made (in English, Chinese, Japanese, Portuguese), a few words over a pasted error, a
failure that persists whatever the user does, "不需要 X，直接 Y"; and a "try again" that takes up the agent's offer
to retry what failed outside its work, or a request sent again once the agent had asked for what it needed.
Every turn here is written for the test, none is taken from a labelled transcript."""

from __future__ import annotations

import copy

import pytest

from kg.core.errors import RulesError
from kg.reflect import load_rules
from kg.reflect.detect import learnings, turn_signals
from kg.reflect.lesson import phrase
from tests.unit.test_reflect_signals import RAW, RULES, transcript


def signals(*turns: tuple[str, str]) -> tuple[str, ...]:
    t = transcript(*turns)
    return turn_signals(t, RULES)[len(turns) - 1]


def found(*turns: tuple[str, str]) -> set[str]:
    t = transcript(*turns)
    return {f.category for f in learnings(t, RULES) if f.turn == len(turns) - 1}


ASK = ("user", "the sidebar shows two copies of the menu, fix it")


@pytest.mark.parametrize("claim", [
    "The second copy of the menu has been removed from the sidebar template.",
    "I've refactored the layout so the menu is rendered once. It should work correctly now.",
    "侧边栏模板里重复的菜单已经删除了。",
    "サイドバーの重複したメニューを削除しました。",
    "Removi a segunda cópia do menu. Agora deve funcionar.",
])
def test_a_change_stated_as_made_is_a_claim_in_any_language(claim):
    assert "claims_done" in signals(ASK, ("assistant", claim), ("user", "ok"))


@pytest.mark.parametrize("said", [
    "i can still see both menus",
    "it only shows the first menu now and the links are gone",
    "侧边栏还是有两个菜单",
    "メニューのエラーが発生しています",
    "aparece apenas o primeiro menu",
])
def test_the_result_reported_after_the_claim_is_a_correction(said):
    turns = (ASK, ("assistant", "The second copy of the menu has been removed from the sidebar template. "
                                "侧边栏模板里重复的菜单已经删除了。メニューを削除しました。Agora deve funcionar."),
             ("user", said))
    sigs = signals(*turns)
    assert {"still_after_fix", "fails_after_claim"} & set(sigs), sigs
    if "still_after_fix" in sigs:  # "still" right after the claim is a reason of its own (the others weigh in)
        assert "correction" in found(*turns)


@pytest.mark.parametrize("claim", [
    "Menu: the template renders it once, so the sidebar no longer shows a second copy.",
    "Wrapped the list in a single container; now it no longer duplicates the links.",
])
def test_a_fault_said_to_be_gone_is_a_claim_and_still_after_it_a_correction(claim):
    """An agent's summary that ends by saying the fault is gone ("so X no longer overflows") claims the fix as any
    "it now works" does: "still" right after it says the fix did not do it."""
    turns = (ASK, ("assistant", claim), ("user", "there is still a second menu at the bottom of the page"))
    assert "claims_done" in signals(*turns)
    assert "still_after_fix" in signals(*turns)
    assert "correction" in found(*turns)


def test_a_failure_whatever_the_user_does_persists():
    assert "still_again" in signals(ASK, ("assistant", "Done."), ("user", "i get the same page no matter what i do"))
    assert "still_again" in signals(ASK, ("assistant", "Done."), ("user", "不管怎么刷新页面都是两个菜单"))


PASTE = "```\nTypeError: Cannot read properties of undefined (reading 'items')\n    at Sidebar (sidebar.js:12)\n```"
SUGGEST = ("assistant", "Run `npm run dev` again; the sidebar reads its items from the store now.")


def test_a_few_words_over_a_pasted_error_say_the_fix_failed():
    turns = (ASK, SUGGEST, ("user", f"that gave me an error:\n{PASTE}"))
    assert "fails_with_paste" in signals(*turns)
    assert "correction" in found(*turns)


@pytest.mark.parametrize("said", [PASTE, f"I got this error, can you explain what it means?\n{PASTE}"])
def test_a_pasted_error_alone_or_asked_about_is_a_report(said):
    turns = (ASK, SUGGEST, ("user", said))
    assert "fails_with_paste" not in signals(*turns)
    assert "correction" not in found(*turns)


def test_an_error_named_in_the_users_words_is_not_a_pasted_error():
    assert "error_paste" not in signals(ASK, SUGGEST, ("user", "that gave me an error:"))
    assert "error_paste" in signals(ASK, SUGGEST, ("user", "still getting TypeError: items is undefined"))


def test_dont_x_just_y_in_chinese_is_a_contrast():
    turns = (ASK, ("assistant", "我已经重写了侧边栏组件，并添加了三个测试。"),
             ("user", "不需要写测试，直接把菜单去重就行"))
    sigs = signals(*turns)
    assert "contrast" in sigs and "prohibition" in sigs
    assert "correction" in found(*turns)


AUTH = ("assistant", "I could not push the branch: the remote refused the credentials (authentication failed). "
                     "Let me know if you'd like me to try again once the token is updated.")
OWN_FAIL = ("assistant", "My edit to sidebar.js did not apply cleanly. Let me know if you'd like me to try again.")


def test_try_again_taking_up_an_offer_to_retry_an_outside_failure_is_a_go_ahead():
    turns = (ASK, AUTH, ("user", "try again, i updated the token"))
    assert "accepts_retry" in signals(*turns)
    assert "correction" not in found(*turns)


def test_try_again_after_the_agents_own_failed_attempt_stays_a_correction():
    turns = (ASK, OWN_FAIL, ("user", "try again"))
    assert "accepts_retry" not in signals(*turns)
    assert "correction" in found(*turns)


REQUEST = "merge the two sidebar menus into one list sorted by name"


def test_a_request_sent_again_after_the_agent_asked_for_files_is_not_a_repeat():
    asked = ("assistant", "Could you add sidebar.js and menu.js to the chat? I need to see them first.")
    assert "repeated_ask" not in signals(("user", REQUEST), asked, ("user", REQUEST))
    answered = ("assistant", "I merged the menus in sidebar.js.")
    assert "repeated_ask" in signals(("user", REQUEST), answered, ("user", REQUEST))


CUT = ("assistant", "I'll fix the lint rules next: sort the imports, switch to function declarations, and")


@pytest.mark.parametrize("retry", ["retry", "@agent retry", "@agent 重试", "try again"])
def test_a_bare_retry_after_a_reply_cut_off_mid_sentence_resends_the_request(retry):
    turns = (ASK, CUT, ("user", retry))
    assert {"cut_off", "bare_retry", "accepts_retry"} <= set(signals(*turns))
    assert "correction" not in found(*turns)


@pytest.mark.parametrize("prev", [
    "I fixed the lint rules: sorted the imports and switched to function declarations.",
    "- sort the imports\n- switch to function declarations",
    "```\nnpm run lint\n```",
])
def test_a_reply_that_ends_a_sentence_a_list_or_code_is_not_cut_off(prev):
    assert "cut_off" not in signals(ASK, ("assistant", prev), ("user", "retry"))


def test_how_alike_a_request_said_again_must_be_is_a_rule():
    answered = ("assistant", "I merged the menus in sidebar.js.")
    turns = (("user", REQUEST), answered, ("user", REQUEST + " please"))
    assert "repeats_request" in signals(*turns)
    strict = copy.deepcopy(RAW)
    strict["signals"]["repeat_similar"] = 100  # only the same words count as said again
    t = transcript(*turns)
    assert "repeats_request" not in turn_signals(t, load_rules(strict))[2]
    assert "repeats_request" in turn_signals(transcript(("user", REQUEST), answered, ("user", REQUEST)),
                                             load_rules(strict))[2]
    strict["signals"]["repeat_similar"] = 101
    with pytest.raises(RulesError, match="repeat_similar"):
        load_rules(strict)


DONE = ("assistant", "I added a retry wrapper and a second config loader to sidebar.js.")


@pytest.mark.parametrize(("said", "signal"), [
    ("i see no menu items at all on the mobile layout", "observes"),
    ("我发现侧边栏里有很多重复的代码", "observes"),
    ("the solution was to clear the browser cache", "user_solved"),
    ("why is the loader there? i dont need it to be there!", "not_asked"),
    ("do we need all that code, can't we drop most of it", "flaw"),
])
def test_what_the_user_sees_in_the_work_or_did_about_it(said, signal):
    assert signal in signals(ASK, DONE, ("user", said))


@pytest.mark.parametrize("said", ["i see, thanks", "i see what you mean, go ahead", "i don't want it to crash on load"])
def test_acknowledging_or_saying_what_to_avoid_is_not_an_observation_of_the_work(said):
    sigs = signals(ASK, DONE, ("user", said))
    assert "observes" not in sigs and "not_asked" not in sigs


def test_a_logfmt_line_is_a_programs_output_not_the_users_words():
    log = 'time="2026-01-02T10:00:00Z" level=warning msg="the attribute `version` is obsolete, please remove it"'
    sigs = signals(ASK, DONE, ("user", f"I got this when starting it, what does it mean?\n{log}"))
    assert "undo" not in sigs and "pasted" in sigs


@pytest.mark.parametrize("prev", ["Let me update the sidebar tests.", "我将更新 sidebar.ts，去掉未使用的常量。"])
def test_a_reply_that_ends_announcing_a_step_it_never_took_stopped(prev):
    assert "cut_off" in signals(ASK, ("assistant", prev), ("user", "retry"))
    assert "cut_off" not in signals(ASK, ("assistant", "Let me know if the menu still shows twice."), ("user", "retry"))


@pytest.mark.parametrize("said", ["if the image is set, just print the docker pull command they should use",
                                  "debug logs should only appear when --debug is given"])
def test_an_instruction_with_only_or_just_is_not_a_result_that_falls_short(said):
    assert "not_done" not in signals(ASK, DONE, ("user", said))


def test_a_flag_or_path_holding_verify_is_not_a_doubt():
    assert "are_you_sure" not in signals(ASK, DONE, ("user", "commit it with --no-verify"))
    assert "are_you_sure" not in signals(ASK, DONE, ("user", "run scripts/verify.sh next"))
    assert "are_you_sure" in signals(ASK, DONE, ("user", "please verify the menu renders once"))


@pytest.mark.parametrize(("said", "lesson"), [
    ("the solution was to run git commit with --no-verify", "Run git commit with --no-verify"),
    ("what fixed it was pinning numpy to 1.26", "Pinning numpy to 1.26"),
])
def test_a_fix_the_user_found_is_the_lesson(said, lesson):
    assert phrase("correction", [said], said, RULES.lessons)[0] == lesson


HANDED = ("assistant", "The build fails because the icons folder is not copied. You can run `npm run copy-icons` "
                       "before `npm run build`.")


@pytest.mark.parametrize("said", ["fix it", "just fix this please", "fix", "修一下", "corrige ça"])
def test_an_order_to_fix_naming_nothing_after_a_hand_back_sends_the_work_back(said):
    """The agent explained the fault and handed the fix to the user; the whole reply is "fix it": the work sent back,
    not the next piece of work (which names what to do: "fix the footer links")."""
    turns = (ASK, HANDED, ("user", said))
    assert "redirect_after_handback" in signals(*turns)
    assert "correction" in found(*turns)


def test_an_order_to_fix_after_a_claim_of_done_says_it_is_broken():
    turns = (ASK, ("assistant", "Done. The sidebar now works correctly."), ("user", "fix it"))
    assert "correction" in found(*turns)


@pytest.mark.parametrize(("agent", "said"), [
    ("The icons folder is not copied before the build. Would you like me to fix it?", "fix it"),
    ("Done. The sidebar now works correctly.", "fix the footer links too"),
])
def test_fix_accepting_an_offer_or_naming_new_work_is_no_correction(agent, said):
    assert "correction" not in found(ASK, ("assistant", agent), ("user", said))


@pytest.mark.parametrize("said", ["check and fix everything", "run it all"])
def test_the_whole_of_the_work_sent_back_after_a_hand_back_is_no_new_instruction(said):
    """"check and fix everything" after the agent left its checks to the user names no new work: the work sent back
    whole (do_it_yourself), which the model's weight against a new instruction no longer cancels."""
    agent = ("assistant", "I could not run the suite here because no JDK is installed. You can run it with "
                          "`./gradlew test`.")
    turns = (ASK, agent, ("user", said))
    assert "instruction" not in signals(*turns)
    assert "correction" in found(*turns)
