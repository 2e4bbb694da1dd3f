"""Signals of a user turn: which agent reply belongs to it, signals that combine events, a class's reasons."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import pytest

from kg.core.errors import RulesError
from kg.reflect import load_rules
from kg.reflect.detect import learnings, own_lines, speaking_turns, turn_signals
from kg.reflect.parse import Transcript, Turn
from kg.reflect.signals import views

RULES_PATH = Path(__file__).resolve().parents[2] / "rules" / "reflect.toml"
RAW = tomllib.loads(RULES_PATH.read_text(encoding="utf-8"))
RULES = load_rules(RAW)


def transcript(*turns: tuple) -> Transcript:
    """(role, text) or (role, text, tool_name, tool_input) per turn."""
    out = []
    for i, t in enumerate(turns):
        role, text, *tool = t
        out.append(Turn(i, role, text, tool_name=tool[0] if tool else None, tool_input=tool[1] if tool else None,
                        position=f"turn {i + 1}"))
    return Transcript("text", tuple(out))


def view_of(t: Transcript):
    users = speaking_turns(t, RULES)
    return views(t, RULES, users, {i: own_lines(t.turns[i].text, RULES) for i in users})


def test_a_reply_belongs_to_the_last_user_turn_it_answers():
    # Two user turns wait while the agent works without words; its reply answers the second, not the first.
    t = transcript(("user", "deploy it"), ("assistant", "Deployed to production."),
                   ("user", "also bump the version"), ("assistant", "", "Bash", "npm version patch"),
                   ("user", "no, staging, not production"),
                   ("assistant", "You're right, my mistake: I deployed to production."))
    v = view_of(t)
    assert v[4].next.startswith("You're right")
    assert v[2].next == ""
    assert "apologises" not in turn_signals(t, RULES)[2]
    assert "apologises" in turn_signals(t, RULES)[4]


def test_the_agent_rerunning_its_last_tool_with_changed_input_is_a_signal():
    before = [("user", "run the tests"), ("assistant", "", "Bash", "pytest tests/unit -q"),
              ("assistant", "All tests pass.")]
    retried = transcript(*before, ("user", "the integration ones"),
                         ("assistant", "", "Bash", "pytest tests/integration -q"))
    other = transcript(*before, ("user", "now the docs"), ("assistant", "", "Read", "docs/index.md"))
    same = transcript(*before, ("user", "once more"), ("assistant", "", "Bash", "pytest tests/unit -q"))
    assert "retries_tool" in turn_signals(retried, RULES)[3]
    assert "retries_tool" not in turn_signals(other, RULES)[3]
    assert "retries_tool" not in turn_signals(same, RULES)[3]


@pytest.mark.parametrize(
    ("agent_before", "said", "agent_after", "signal"),
    [
        ("I've fixed the parser; all tests pass.", "still failing on the empty file", "", "still_after_fix"),
        ("You can run the migration with `make migrate`.", "do it yourself", "", "redirect_after_handback"),
        ("Done: I pushed the branch.", "@AGENTS.md", "", "rule_ref_after_work"),
        ("Done.", "did you update the changelog?", "No, I didn't update it. Doing it now.", "omission_admitted"),
        ("The build is now fixed.", "no, it is not fixed", "", "denies_claim"),
        ("I've updated the report generator.", "the totals section is empty", "", "fails_after_claim"),
        ("Done: the README is rewritten.", "it duplicates the install section", "", "fails_after_claim"),
        ("Done.", "are all tests passing?", "You're right to ask: two still fail.", "question_conceded"),
        ("I created a new cache module.", "didn't we already have one in utils?", "", "negative_question"),
        ("I can't run the tests: vitest doesn't support mocking modules.", "vitest supports mocking with vi.mock",
         "", "fact_after_cannot"),
        ("There is no built-in way to filter by status, so for now I piped the list through jq.",
         "add a task to add a --status flag to list", "", "wants_after_workaround"),
        ("All tests pass now.", "wtf, the build is red??", "", "frustrated_at_work"),
        ("Let me rewrite the migration:\nCancelled", "use the existing migration instead", "",
         "redirect_after_interrupt"),
    ],
)
def test_signals_that_combine_events(agent_before, said, agent_after, signal):
    turns = [("user", "go"), ("assistant", agent_before), ("user", said)]
    if agent_after:
        turns.append(("assistant", agent_after))
    assert signal in turn_signals(transcript(*turns), RULES)[2]


def test_a_combined_signal_can_require_a_signal_not_to_fire():
    paste = "FAILED tests/test_x.py::test_y - TypeError: bad arg"
    t = transcript(("user", "go"), ("assistant", "Done."), ("user", paste),
                   ("assistant", "I missed an argument there. Fixing it."))
    sigs = turn_signals(t, RULES)[2]
    assert "apologises" in sigs and "owns_mistake" not in sigs
    assert "correction" not in {f.category for f in learnings(t, RULES)}


@pytest.mark.parametrize(
    "said",
    [
        "i don't understand, does it capture the variable at creation time?",  # "don't" of the speaker
        "Там почти все готово, но почему-то текст один и тот же",  # "почему-то" is "somehow", not "why"
    ],
)
def test_instructions_and_suggestions_are_not_corrections(said):
    t = transcript(("user", "go"), ("assistant", "Done."), ("user", said),
                   ("assistant", "You're right, good point. Doing that now."))
    assert "correction" not in {f.category for f in learnings(t, RULES)}


def test_every_correction_names_its_reason_in_the_users_words():
    t = transcript(("user", "go"), ("assistant", "I've fixed the parser; all tests pass."),
                   ("user", "still failing on the empty file"))
    f = next(f for f in learnings(t, RULES) if f.category == "correction")
    assert set(f.signals) & RULES.signals.user_side
    assert f"Signals: {', '.join(f.signals)}" in f.details


@pytest.mark.parametrize(
    ("combined", "message"),
    [
        ({"x": ["no_such still_again"]}, "signals.combined.x: 'no_such' is not a signal defined before it"),
        ({"x": ["!still_again"]}, "signals.combined.x: group '!still_again' needs at least one signal that must fire"),
        ({"Bad": ["still_again"]}, "signals.combined.Bad: a signal name must be snake_case"),
        ({"rejects": ["still_again"]}, "signals.combined.rejects: this signal name is taken"),
    ],
)
def test_combined_signals_are_checked(combined, message):
    data = copy.deepcopy(RAW)
    data["signals"]["combined"] = combined
    with pytest.raises(RulesError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_rules(data)


def test_a_class_reason_must_be_a_signal():
    data = copy.deepcopy(RAW)
    data["correction"]["reasons"] = ["rejects", "nope"]
    with pytest.raises(RulesError, match=r"correction.reasons: 'nope' is not a signal"):
        load_rules(data)


def test_one_lesson_said_several_ways_gets_one_key():
    from kg.reflect.lesson import key

    said = ["Stop editing files in the main workspace, not the session repo",
            "Are you making these changes in the main workspace or in the session repo",
            "Dont modify the main workspace, do this from the session workspace",
            "You made these changes in the main workspace, not the session"]
    keys = {key("correction", s, RULES.lessons) for s in said}
    assert len(keys) == 1 and None not in keys
    # a generic noun still names a lesson when little else does
    assert key("correction", "Stop editing the generated files", RULES.lessons) == "fix.file-generat"


def test_a_request_said_again_is_a_signal_and_a_plain_go_ahead_is_not():
    asked = transcript(("user", "rename the flag to --dry-run"), ("assistant", "Renamed the option."),
                       ("user", "rename the flag to --dry-run!"))
    assert "repeated_ask" in turn_signals(asked, RULES)[2]
    nudged = transcript(("user", "yes, continue please"), ("assistant", "Step 2 done."),
                        ("user", "yes, continue please"))
    assert "repeated_ask" not in turn_signals(nudged, RULES)[2]


def test_the_harness_noting_an_interrupt_is_what_came_before():
    t = transcript(("user", "go"), ("assistant", "", "Bash", "rm -rf build"),
                   ("user", "[Request interrupted by user for tool use]"), ("user", "don't delete the build folder"))
    sigs = turn_signals(t, RULES)[3]
    assert "interrupted" in sigs and "redirect_after_interrupt" in sigs
    assert "correction" in {f.category for f in learnings(t, RULES) if f.turn == 3}


def test_a_lesson_says_what_to_do_even_when_the_finding_came_from_a_rebuke():
    from kg.reflect.lesson import phrase

    said = ["are you kidding me?", "the header still looks the same", "use the theme tokens for the header colours"]
    lesson, source = phrase("correction", said, said[0], RULES.lessons)
    assert (lesson, source) == ("Use the theme tokens for the header colours", said[2])
    # a sentence that already names what went wrong stays the lesson; swearing is taken out of it
    lesson, _ = phrase("correction", ["the fucking header still looks the same"], "the fucking header still looks the "
                       "same", RULES.lessons)
    assert lesson == "The header still looks the same"
    # praise stays with the praising sentence
    assert phrase("best_practice", ["Thanks!", "now update the docs"], "Thanks!", RULES.lessons)[1] == "Thanks!"


def test_a_pasted_shell_command_and_its_output_are_not_the_user_speaking():
    said = "when i run it i see no stats\n\n➜  app git:(main) ✗ npm run report\nNo data found.\n\nwhy?"
    assert [ln for _, ln in own_lines(said, RULES)] == ["when i run it i see no stats", "why?"]
    assert [ln for _, ln in own_lines("me@box ~/app % make\nNo rule to make target", RULES)] == []
    # a markdown heading is not a prompt
    heading = "# Plan\nno, keep the old parser"
    assert [ln for _, ln in own_lines(heading, RULES)] == heading.splitlines()


def test_the_agents_reasoning_and_bare_markup_are_not_its_words():
    t = transcript(("user", "go"), ("assistant", "<div class='chat'>\nI've fixed the parser.\n</div>"),
                   ("user", "it still fails on empty input"),
                   ("assistant", "<thinking-content-ab12>\nThe user says it fails.\n</thinking-content-ab12>\n"
                                 "My mistake: I missed the empty case."))
    v = view_of(t)[2]
    assert v.prev == "I've fixed the parser." and v.next == "My mistake: I missed the empty case."
    assert {"claims_done", "still_after_fix", "apologises"} <= set(turn_signals(t, RULES)[2])


def test_undoing_or_forbidding_what_the_agent_just_did_is_a_signal():
    worked = [("user", "make retries safer"), ("assistant", "", "Edit", "src/net/retry_loop.py"),
              ("assistant", "I wrapped the request in a backoff helper.")]
    about = transcript(*worked, ("user", "remove the backoff helper, keep it simple"))
    named = transcript(*worked, ("user", "don't touch retry_loop.py"))
    new = transcript(*worked, ("user", "remove the old logging module"))
    assert "forbids_agent_act" in turn_signals(about, RULES)[3]
    assert "forbids_agent_act" in turn_signals(named, RULES)[3]  # a path the agent's tool call used
    assert "forbids_agent_act" not in turn_signals(new, RULES)[3]  # something the agent never touched


def test_words_after_the_user_undid_the_agents_change_redirect_it():
    before = [("user", "add caching to the loader"), ("assistant", "", "edit", "loader.py"),
              ("assistant", "Added an LRU cache to load().")]
    said = "make the cache a module-level dict keyed by path"
    undone = transcript(*before, ("user", "/undo"), ("user", said))
    plain = transcript(*before, ("user", said))
    greeting = transcript(*before, ("user", "/undo"), ("user", "hi"))
    assert {"undid", "redirect_after_undo"} <= set(turn_signals(undone, RULES)[4])
    assert "correction" in {f.category for f in learnings(undone, RULES) if f.turn == 4}
    assert "correction" not in {f.category for f in learnings(plain, RULES) if f.turn == 3}
    assert "redirect_after_undo" not in turn_signals(greeting, RULES)[4]


def test_still_or_a_problem_right_after_the_agents_tool_calls_means_its_change_did_not_work():
    # an agent that edits without saying it is done (aider) still gets "still" and problems read against its work
    t = transcript(("user", "fix the header colour"), ("assistant", "", "edit", "theme.ts"),
                   ("user", "the header is still grey"), ("assistant", "", "edit", "theme.ts"),
                   ("user", "now the footer is broken"))
    sigs = turn_signals(t, RULES)
    assert "still_after_work" in sigs[2] and "fails_after_work" in sigs[4]
    first = transcript(("user", "the header is still grey"))
    assert "still_after_work" not in turn_signals(first, RULES)[0]


def test_an_agent_promising_to_work_differently_is_a_signal():
    t = transcript(("user", "go"), ("assistant", "Done."), ("user", "no comments in the code"),
                   ("assistant", "Understood, I won't add comments going forward."))
    assert "promises_change" in turn_signals(t, RULES)[2]


def test_a_signal_about_the_agents_words_must_say_which_words():
    data = copy.deepcopy(RAW)
    data["signals"]["about_agent"] = {"x": [r"\bremove\b(.+)"]}
    with pytest.raises(RulesError, match=r"signals.about_agent.x: each pattern needs a group \(\?P<obj>"):
        load_rules(data)


WORK = [("user", "add a bouncing ball game"), ("assistant", "", "edit", "game.js"),
        ("assistant", "I've added the game loop and the paddle.")]


def found_at(t: Transcript, turn: int) -> set[str]:
    return {f.category for f in learnings(t, RULES) if f.turn == turn}


@pytest.mark.parametrize(("said", "signal"), [
    ("the score label should be inside the box", "expects_after_work"),
    ("nice, it works. but the paddle is way too slow", "fault_after_praise"),
    ("only edit game.js", "restricts_after_work"),
    ("try using requestAnimationFrame for the loop", "try_after_work"),
])
def test_what_a_turn_says_about_the_agents_fresh_work_is_a_correction(said, signal):
    t = transcript(*WORK, ("user", said))
    sigs = turn_signals(t, RULES)[3]
    assert signal in sigs
    assert "correction" in found_at(t, 3)
    # the same words as the opening request answer no work: no correction (and no "... after work")
    opening = transcript(("user", said), ("assistant", "Sure."))
    assert "correction" not in found_at(opening, 0)
    assert not signal.endswith("_work") or signal not in turn_signals(opening, RULES)[0]


def test_a_should_said_as_a_request_or_question_is_not_an_expectation_unmet():
    for said in ("should the label be inside the box?", "you should add a label", "we should add sound next"):
        assert "expects" not in turn_signals(transcript(*WORK, ("user", said)), RULES)[3]


def test_praise_alone_is_not_a_fault():
    t = transcript(*WORK, ("user", "nice, it works. thanks"))
    assert "fault_after_praise" not in turn_signals(t, RULES)[3] and "correction" not in found_at(t, 3)


def test_a_status_question_the_agent_answers_not_done_is_a_correction():
    asked = [*WORK, ("user", "are all tests passing?")]
    denied = transcript(*asked, ("assistant", "No, I haven't run them yet. Running them now."))
    done = transcript(*asked, ("assistant", "Yes: 42 passed."))
    assert "status_denied" in turn_signals(denied, RULES)[3] and "correction" in found_at(denied, 3)
    assert "status_denied" not in turn_signals(done, RULES)[3] and "correction" not in found_at(done, 3)
    # the reply finds the step undone without saying "no": git shows uncommitted work, or it does it now
    for reply in ("```\nOn branch main\nChanges not staged for commit:\n  modified: game.js\n```",
                  "It was not saved anywhere yet. Let me save it to docs/pr.md."):
        t = transcript(*WORK, ("user", "did the changes get committed?"), ("assistant", reply))
        assert "status_denied" in turn_signals(t, RULES)[3]
    clean = transcript(*WORK, ("user", "did the changes get committed?"),
                       ("assistant", "Yes, committed as 3f2a1c: nothing left to commit, working tree clean."))
    assert "status_denied" not in turn_signals(clean, RULES)[3]


def test_replacing_what_the_agent_just_used_names_its_words():
    before = [("user", "add a prompt"), ("assistant", "I used bun-promptx for the prompt.")]
    theirs = transcript(*before, ("user", "use clack instead of bun-promptx"))
    new = transcript(*before, ("user", "use tabs instead of spaces in the readme"))
    assert "replaces_agent_act" in turn_signals(theirs, RULES)[2]
    assert "replaces_agent_act" not in turn_signals(new, RULES)[2]


@pytest.mark.parametrize(("said", "signal"), [("всё ещё не работает", "still_again"),
                                              ("это неправильно", "says_wrong"),
                                              ("сделай это сам", "do_it_yourself"),
                                              ("попробуй ещё раз", "try_again")])
def test_russian_words_fire_the_same_signals(said, signal):
    assert signal in turn_signals(transcript(*WORK, ("user", said)), RULES)[3]


@pytest.mark.parametrize("said", ["no", "still broken", "same error", "that broke the tests",
                                  "hmm, now the logout is gone", "did you even run it?", "нет", "всё ещё не работает"])
def test_a_terse_verdict_right_after_a_fix_is_a_correction(said):
    fixed = [("user", "fix the login redirect"), ("assistant", "", "edit", "auth/login.py"),
             ("assistant", "I fixed the redirect in login.py; it now sends users to /home.")]
    assert "correction" in found_at(transcript(*fixed, ("user", said)), 3)


def test_still_in_russian_is_not_a_next_step():
    assert "extends" not in turn_signals(transcript(*WORK, ("user", "всё ещё не работает")), RULES)[3]
    assert "extends" in turn_signals(transcript(*WORK, ("user", "ещё добавь звук")), RULES)[3]


def test_bare_markup_is_not_the_agents_last_words():
    """A published chat wraps turns in <div> lines: the agent's words before the user spoke are its last prose."""
    t = transcript(("user", "replace create_pipe_input"),
                   ("assistant", "I replaced create_pipe_input() with create_input()."),
                   ("assistant", "", "edit", "tests/test_main.py"),
                   ("assistant", '</div>\n<div class="chat-transcript" markdown="1">'), ("user", "nice, that worked!"))
    assert view_of(t)[4].prev.startswith("I replaced create_pipe_input()")
    praise = [f for f in learnings(t, RULES) if f.turn == 4 and f.category == "best_practice"]
    assert praise and "create_pipe_input" in praise[0].details.rsplit("The verdict is on: ", 1)[-1]  # (not the lesson)


# --- the agent's next action and what the user's words point at ------------------------------------------------------

def test_the_agent_changing_again_the_file_it_had_just_changed_is_a_redo():
    redo = transcript(("user", "add a retry to the fetch"), ("assistant", "", "Edit", "src/net/fetch.py"),
                      ("assistant", "Done: fetch now retries three times."), ("user", "the backoff should be longer"),
                      ("assistant", "", "Edit", "src/net/fetch.py"))
    other = transcript(("user", "add a retry to the fetch"), ("assistant", "", "Edit", "src/net/fetch.py"),
                       ("assistant", "Done: fetch now retries three times."), ("user", "now add a README section"),
                       ("assistant", "", "Edit", "README.md"))
    read = transcript(("user", "add a retry to the fetch"), ("assistant", "", "Read", "src/net/fetch.py"),
                      ("assistant", "Done: fetch now retries three times."), ("user", "the backoff should be longer"),
                      ("assistant", "", "Read", "src/net/fetch.py"))
    assert {"reedits", "redo_after_claim"} <= set(turn_signals(redo, RULES)[3])
    assert "reedits" not in turn_signals(other, RULES)[3]
    assert "reedits" not in turn_signals(read, RULES)[3]  # reading a file again changes nothing


def test_codex_patches_name_the_files_they_change():
    t = transcript(("user", "fix the parser"), ("assistant", "", "apply_patch", "apply_patch kg/parse.py"),
                   ("assistant", "Fixed the parser."), ("user", "that is still wrong"),
                   ("assistant", "", "apply_patch", "apply_patch kg/parse.py tests/test_parse.py"))
    assert "reedits" in turn_signals(t, RULES)[3]


def test_naming_the_agents_file_or_identifier_is_about_its_work():
    before = [("user", "speed up the loader"), ("assistant", "", "Edit", "app/cache_loader.py"),
              ("assistant", "I added an LRU cache in `load_config`.")]
    named = turn_signals(transcript(*before, ("user", "only touch cache_loader.py")), RULES)[3]
    ident = turn_signals(transcript(*before, ("user", "load_config must stay pure")), RULES)[3]
    new = turn_signals(transcript(*before, ("user", "now write the changelog")), RULES)[3]
    assert "names_agent_work" in named and "refers_to_work" in named
    assert "names_agent_work" in ident
    assert "names_agent_work" not in new


def test_a_new_request_after_praise_or_a_finished_task_is_not_a_correction():
    praised = transcript(*WORK, ("user", "great, that works.\nplease add a high score table"))
    assert "new_after_praise" in turn_signals(praised, RULES)[3]
    assert "correction" not in found_at(praised, 3)
    assert "correction" not in found_at(transcript(*WORK, ("user", "great, that works. now add a high score")), 3)
    done = transcript(("user", "add a bouncing ball game"),
                      ("assistant", "I've added the game loop and the paddle; everything works."),
                      ("user", "please add a high score table"))
    assert "new_after_done" in turn_signals(done, RULES)[2]
    assert "correction" not in found_at(done, 2)


def test_a_plain_request_the_agent_concedes_is_a_correction():
    t = transcript(*WORK, ("user", "use requestAnimationFrame for the loop"),
                   ("assistant", "You're right, my mistake: setInterval was the wrong choice. Switching now."))
    sigs = turn_signals(t, RULES)[3]
    assert "request_conceded" in sigs and "correction" in found_at(t, 3)
    f = next(f for f in learnings(t, RULES) if f.turn == 3 and f.category == "correction")
    assert "request_conceded" in f.signals and "Signals: " in f.details  # every finding names what fired


def test_do_it_yourself_after_the_agent_handed_the_work_back_in_russian():
    t = transcript(("user", "почини баг с горячей клавишей"),
                   ("assistant", "Пришлите, пожалуйста, файлы hotkey.ts и store.ts, и я верну исправленные. Жду!"),
                   ("user", "сам открой файлы"))
    sigs = turn_signals(t, RULES)[2]
    assert {"hands_back", "asks_user", "do_it_yourself", "redirect_after_handback"} <= set(sigs)
    assert "supplies_asked" not in sigs
