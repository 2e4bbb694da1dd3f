"""Detection: what is learned, from whose words, keys, dedupe, caps, redaction, rules."""

from __future__ import annotations

import copy
import json
import re
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from kg.core.errors import RulesError
from kg.reflect import detect, load_rules, own_lines, parse_text, reflect
from kg.reflect.detect import Finding, _one_entry_per_rule, learnings
from kg.reflect.parse import Transcript, Turn

RULES_PATH = Path(__file__).resolve().parents[2] / "rules" / "reflect.toml"
RAW = tomllib.loads(RULES_PATH.read_text(encoding="utf-8"))
RULES = load_rules(RAW)


def chat(*pairs: tuple[str, str]) -> Transcript:
    turns = [Turn(i, role, text, position=f"turn {i + 1}") for i, (role, text) in enumerate(pairs)]
    return Transcript("text", tuple(turns))


def kinds(t: Transcript) -> list[tuple[str, str]]:
    """(kind, category) of each entry, and of what an entry stands for too (a correction said as a rule or a fact is
    one entry, the rule or the fact, marked as the correction: kg.reflect.detect._one_entry_per_rule)."""
    found = detect(t, RULES)
    return [(f.kind, f.category) for f in found] + [("learning", c) for f in found for c in f.also]


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("No, that's not right. Use pnpm.", ("learning", "correction")),
        ("Actually, it's port 8080, not 3000", ("learning", "correction")),
        ("You're wrong about the default timeout", ("learning", "correction")),
        ("That's outdated, the flag was removed", ("learning", "correction")),
        ("不对，应该用 pnpm", ("learning", "correction")),
        ("错了，实际上应该是 8080 端口", ("learning", "correction")),
        ("It would be nice if you could run the linter too", ("feature", "feature_request")),
        ("I wish you could read PDFs", ("feature", "feature_request")),
        ("Why can't you run it in the background?", ("feature", "feature_request")),
        ("希望你能自动格式化", ("feature", "feature_request")),
        ("FYI the API now returns a list, not a dict", ("learning", "knowledge_gap")),
        ("There's a better approach: batch the inserts", ("learning", "correction")),
        ("you forgot to update the changelog", ("learning", "correction")),
        ("why didn't you run the tests first?", ("learning", "correction")),
        ("I asked for a summary, not a rewrite", ("learning", "correction")),
        ("it's still failing with the same error, you didn't fix it", ("learning", "correction")),
        ("Always use pnpm, never npm", ("preference", "preference")),
        ("以后不要再用 npm 了", ("preference", "preference")),
        ("I prefer tabs over spaces", ("preference", "preference")),
        ("From now on, run ruff before committing", ("preference", "preference")),
        ("记住，以后都用中文回答", ("preference", "preference")),
        ("我更喜欢简短的回答", ("preference", "preference")),
    ],
)
def test_user_phrases(said, expected):
    t = chat(("user", "hello"), ("assistant", "Sure, done."), ("user", said))
    assert expected in kinds(t)


@pytest.mark.parametrize("said", ["Is there a way to skip the slow tests?", "能不能支持导出 CSV？"])
def test_a_capability_asked_for_after_the_lack_showed_is_a_feature_request(said):
    """Asked with nothing lacking before it, it is a how-to question (labels/README.md: the lack is "exposed in the
    same conversation"); after the agent said it cannot, a feature request."""
    lack = chat(("user", "hello"), ("assistant", "I can't do that with the tools I have here."), ("user", said))
    assert ("feature", "feature_request") in kinds(lack)
    assert ("feature", "feature_request") not in kinds(chat(("user", "hello"), ("assistant", "Sure, done."),
                                                            ("user", said)))


@pytest.mark.parametrize(
    "said",
    ["yes", "go ahead and commit it", "no problem, carry on", "what tasks are available?", "push it",
     "Can you also export it as CSV?", "add a --verbose flag to the build command", "好的，继续"],
)
def test_ordinary_turns_teach_nothing(said):
    assert kinds(chat(("user", "hi"), ("assistant", "ok"), ("user", said))) == []


DONE_AND_ASKS = "I've updated the parser and all tests pass. Would you like me to add docs as well?"


@pytest.mark.parametrize(
    "said",
    [
        "Nice work! Can you also add a test for the empty input case?",  # praise, then a new request
        "lgtm, please commit it",  # approval
        "No, the docs can wait. Let's move on to the exporter",  # "no" answers the agent's own question
        "What does the --strict flag do in this parser?",  # a question that only asks
        "Could you write a short README section for it?",  # a polite request for new work
        "Also add a flag for the output path",  # the next step
        "谢谢，很好。接下来写文档",
    ],
)
def test_praise_answers_questions_and_new_work_are_not_corrections(said):
    """What other users say most after a finished job: none of it says the agent was wrong."""
    found = kinds(chat(("user", "fix the parser"), ("assistant", DONE_AND_ASKS), ("user", said)))
    assert ("learning", "correction") not in found and ("preference", "preference") not in found


@pytest.mark.parametrize("said", ["This never worked on CI before either", "it always times out on my laptop"])
def test_describing_what_happens_is_not_a_lasting_rule(said):
    assert ("preference", "preference") not in kinds(chat(("user", "go"), ("assistant", "Done."), ("user", said)))


@pytest.mark.parametrize(
    ("said", "lasting"),
    [
        ("always run the tests before you commit", True),
        ("can you always show the diff first?", True),
        ("Do not ever push to main", True),
        ("每次提交前都要跑测试", True),
        ("以后提交前先跑测试", True),
        ("never mind, let's do the exporter instead", False),  # "never" that is not a rule
        ("use pnpm for now", False),  # a one-off
        ("for now, don't push anything", False),
        ("it never loads", False),  # a description
        ("总是报错", False),
    ],
)
def test_lasting_rules_are_preferences_and_one_offs_are_not(said, lasting):
    found = kinds(chat(("user", "go"), ("assistant", "Done. All tests pass."), ("user", said)))
    assert (("preference", "preference") in found) is lasting


def test_assistant_words_are_never_a_user_correction():
    t = chat(
        ("user", "fix it"),
        ("assistant", "No, that's not right. Actually, it should be 8080. Can you also..."),
    )
    assert kinds(t) == []


def test_correction_needs_something_to_correct():
    t = chat(("user", "I don't think the generated file is correct"), ("assistant", "Let me look."))
    assert kinds(t) == []


@pytest.mark.parametrize(
    "pasted",
    [
        "why?\n```\nError: that's not right\n```",
        "> No, that's not right\n\nwhat do you think?",
        "look at this log\n2025-01-01 10:00:01 ERROR that's wrong\n2025-01-01 10:00:02 ERROR you are wrong",
        "see\n    no, that's not right = True\n    x = 1",
    ],
)
def test_pasted_and_quoted_text_is_ignored(pasted):
    assert kinds(chat(("user", "go"), ("assistant", "ok"), ("user", pasted))) == []


def test_own_lines_keeps_the_user_words():
    text = "this is wrong\n```py\nx = 1\n```\n> quoted\nand this too"
    assert own_lines(text, RULES) == [(0, "this is wrong"), (5, "and this too")]


def test_claude_code_tool_results_are_not_the_user():
    rec = [
        {"type": "user", "message": {"role": "user", "content": "run it"}},
        {
            "type": "assistant",
            "message": {
                "content": [
                    {"type": "tool_use", "id": "a", "name": "Bash", "input": {"command": "cat notes.txt"}}
                ]
            },
        },
        {
            "type": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "a",
                        "is_error": False,
                        "content": "No, that's not right. I wish you could fly.",
                    }
                ]
            },
        },
        {
            "type": "user",
            "message": {"role": "user", "content": "<command-name>/compact</command-name> no, wrong"},
        },
    ]
    t = parse_text("\n".join(json.dumps(r) for r in rec))
    assert kinds(t) == []


def error_turns(*results: tuple[str, str | None, str, bool | None]) -> Transcript:
    turns = [Turn(0, "user", "do the thing", position="turn 1")]
    for tool, cmd, text, flag in results:
        turns.append(
            Turn(
                len(turns), "assistant", "", tool_name=tool, tool_input=cmd, position=f"turn {len(turns) + 1}"
            )
        )
        turns.append(
            Turn(
                len(turns),
                "tool",
                text,
                tool_name=tool,
                tool_input=cmd,
                is_error=flag,
                position=f"turn {len(turns) + 1}",
            )
        )
    return Transcript("claude-code", tuple(turns))


def test_failed_tool_calls_are_not_findings_here_and_take_no_place_under_the_caps():
    """Failed tool calls are kg.reflect.failures' (one per call); the caps are for what the user said."""
    fail = ("Bash", "git push", "Exit code 128\nfatal: The current branch x has no upstream branch.", True)
    t = error_turns(*[fail] * 6)
    assert detect(t, RULES) == []
    rules = replace(RULES, limits=replace(RULES.limits, max_findings_per_session=2, max_per_kind=2))
    said = chat(("user", "hi"), ("assistant", "ok"), ("user", "no, that's wrong"), ("assistant", "ok"),
                ("user", "that's not right either"))
    t = Transcript("claude-code", (*t.turns, *(replace(x, index=len(t.turns) + x.index) for x in said.turns)))
    r = reflect(t, rules)
    assert [f.category for f in r.findings] == ["correction", "correction"] and r.dropped_by_cap == 0


def test_caps_keep_the_most_important():
    rules = replace(RULES, limits=replace(RULES.limits, max_findings_per_session=2, max_per_kind=5))
    t = chat(
        ("user", "hi"),
        ("assistant", "I set up the linter config in pyproject.toml."),
        ("user", "I prefer tabs"),
        ("user", "no, that's still wrong"),
        ("user", "thanks, great work"),
        ("user", "that's not right either, wtf"),
    )
    r = reflect(t, rules)  # (corrections said again or angrily are "high": rules' [correction] raise_when)
    assert [f.category for f in r.findings] == ["correction", "correction"]
    assert r.dropped_by_cap == 2


def test_tool_calls_in_task_and_skill_candidates():
    t = error_turns(*[("Bash", f"step {i}", "ok", False) for i in range(5)])
    r = reflect(t, RULES)
    assert [(c.request, c.tool_calls) for c in r.skill_candidates] == [("do the thing", 5)]
    t2 = error_turns(*[("Bash", f"step {i}", "ok", False) for i in range(4)])
    assert reflect(t2, RULES).skill_candidates == ()


def test_secrets_are_redacted_before_anything_leaves():
    """By default with the secret rules of everything kg stores (rules/secrets.toml)."""
    key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    t = chat(("user", "call the api"), ("assistant", "Done."),
             ("user", f"no, that's wrong, use AKIAABCDEFGHIJKLMNOP and {key}\nand password=hunter22 from now on"))
    blob = json.dumps([f.__dict__ for f in detect(t, RULES)])
    for secret in (key, "hunter22", "AKIAABCDEFGHIJKLMNOP"):
        assert secret not in blob
    assert "[REDACTED:aws_access_key]" in blob and "[REDACTED:openai_key]" in blob


def test_evidence_and_position_point_at_the_line():
    text = (
        "_**User**_\n\nhi\n\n---\n\n_**Assistant**_\n\nok\n\n---\n\n"
        "_**User**_\n\nsome context\nno, that's wrong\n"
    )
    [f] = detect(parse_text(text), RULES)
    assert (f.evidence, f.position) == ("no, that's wrong", "line 16")


def test_a_finding_in_a_jsonl_transcript_points_at_its_record(shared_data):
    """In JSONL a message is one line of the file: a finding names the line of the user's record, not that line plus
    the line of the words inside the message. Pi's large session: a pasted terminal log ending in "wtf" (line 367)
    was reported at line 375, another user turn's line."""
    from kg.reflect.parse import read_transcript

    seen = 0
    for path in (shared_data / "runtimes" / "openclaw" / "transcripts" / "pi-coding-agent" / "large-session.jsonl",
                 shared_data / "transcripts" / "claude_code" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl.gz"):
        t = read_transcript(path)
        for f in learnings(t, RULES):
            assert f.position == t.turns[f.turn].position, (path.name, f.summary)
            seen += 1
    assert seen > 10


# --- rules validation ---------------------------------------------------------------


def mutate(path: str, value) -> dict:
    data = copy.deepcopy(RAW)
    *parents, last = path.split(".")
    node = data
    for p in parents:
        node = node[p]
    node[last] = value
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (mutate("colour", 1), "colour: unknown key (known keys here: version, limits, quoting, signals, "
                              "lessons, correction, feature, knowledge_gap, best_practice, preference)"),
        # failed tool calls are read by rules/errors.toml, secrets redacted by rules/secrets.toml
        *[(mutate(gone, {}), f"{gone}: unknown key (known keys here: version, limits, quoting, signals, lessons, "
                             "correction, feature, knowledge_gap, best_practice, preference)")
          for gone in ("errors", "areas", "redact")],
        (mutate("limits.max_entries", 3), "limits.max_entries: unknown key (known keys here: "
                                          "max_findings_per_session, max_per_kind, evidence_chars, summary_chars, "
                                          "summary_whole_chars, skill_candidate_min_tool_calls, context_turns)"),
        (mutate("correction.phrases", ["x"]), "correction.phrases: unknown key (known keys here: kind, category, "
                                              "priority, source, min_score, requires_prior_assistant, "
                                              "reasons, raise_to, raise_when)"),
        (mutate("limits.max_per_kind", 0), "limits.max_per_kind: must be a whole number of at least 1, not 0"),
        (mutate("limits.max_per_kind", "5"), "limits.max_per_kind: must be a whole number of at least 1, not '5'"),
        (mutate("limits.max_per_kind", 5.0),
         "limits.max_per_kind: must be a whole number of at least 1 written without a decimal point, not 5.0"),
        (mutate("signals.user.contrast", ["(unclosed"]),
         "signals.user.contrast: bad regular expression '(unclosed': missing ), unterminated subpattern at position 0"),
        (mutate("signals.user.contrast", ["no", ""]), "signals.user.contrast: must be a non-empty list of non-empty "
                                                      "strings; item 2 is ''"),
        (mutate("signals.next.short", ["x"]), "signals.next.short: this signal name is taken (each name once, "
                                              "across scopes and computed ones)"),
        (mutate("signals.user.Bad-Name", ["x"]), "signals.user.Bad-Name: a signal name must be snake_case "
                                                 "(findings and weights name it)"),
        (mutate("correction.priority", "urgent"),
         "correction.priority: must be one of low, medium, high, critical, not 'urgent'"),
        (mutate("correction.min_score", 1.5), "correction.min_score: must be a number from 0.0 to 1.0, not 1.5"),
        (mutate("correction.raise_when", ["shouts"]),
         "correction.raise_when: 'shouts' is not a signal of [signals] (or a computed one)"),
        (mutate("correction.raise_to", "urgent"),
         "correction.raise_to: must be one of low, medium, high, critical, not 'urgent'"),
        (mutate("signals.reply_reasons", ["rejects"]), "signals.reply_reasons: 'rejects' is not a signal of the "
                                                       "agent's reply ([signals.next], [signals.next_tools] or "
                                                       "[signals.reply_about_work])"),
        (mutate("lessons.rewrite", [{"pattern": "(?P<a>x)", "template": "{b}"}]),
         "lessons.rewrite[0].template: {b} is not a named group of the pattern (nor {s})"),
        (mutate("lessons.context", {"correction": "{s}: {what}"}),
         "lessons.context.correction: {what} is not a field of a context lesson ({s})"),
        # a lesson is the user's: no template may put the agent's words ({prev}) in it
        (mutate("lessons.context", {"correction": "Check this ({s}): {prev}"}),
         "lessons.context.correction: {prev} is not a field of a context lesson ({s})"),
        (mutate("lessons.meant_context", {"correction": "The user meant {s}, after: {prev}"}),
         "lessons.meant_context.correction: {prev} is not a field of a meant_context lesson ({s})"),
        (mutate("lessons.context", {"praise": "{s}"}),
         "lessons.context.praise: not a finding category (best_practice, correction, feature_request, "
         "knowledge_gap, preference)"),
        (mutate("version", 2), "version: unsupported version 2; this kg understands version 1"),
    ],
)
def test_rules_refuse_bad_keys(data, message):
    with pytest.raises(RulesError) as exc:
        load_rules(data, source="rules/reflect.toml", model=None)
    assert str(exc.value) == f"rules/reflect.toml: {message}"
    assert isinstance(exc.value, ValueError)  # what load_rules raised before RulesError


def test_shipped_rules_load():
    assert {d.name for d in RULES.detectors} == {
        "correction",
        "feature",
        "knowledge_gap",
        "best_practice",
        "preference",
    }


def test_an_injected_redactor_is_used():
    t = chat(("user", "hi"), ("assistant", "ok"), ("user", "no, that's wrong: token XYZ"))
    [f] = detect(t, RULES, redact=lambda s: s.replace("XYZ", "<gone>"))
    assert "XYZ" not in f.evidence + f.details + f.summary and "<gone>" in f.evidence


# --- what users say: signals, model, lessons, keys ---------------------------------------


def found(t: Transcript) -> dict[str, object]:
    return {f.category: f for f in detect(t, RULES)}


def test_one_turn_can_be_a_correction_and_a_knowledge_gap():
    t = chat(("user", "add the retry"), ("assistant", "Done: the client now retries."),
             ("user", "no, that's wrong, the client already retries since v2.1"))
    assert {"correction", "knowledge_gap"} <= {f.category for f in learnings(t, RULES)}
    # written once: the correction, marked as the fact too (the same lesson, the same key)
    (one,) = [f for f in detect(t, RULES) if f.category in ("correction", "knowledge_gap")]
    assert one.category == "correction" and one.also == ("knowledge_gap",) and one.pattern_key.startswith("fix.")


def test_the_agents_apology_makes_a_plain_instruction_a_correction():
    said = "the staging database"
    plain = chat(("user", "seed the data"), ("assistant", "Seeded the production database."), ("user", said),
                 ("assistant", "Sure, switching."))
    conceded = chat(("user", "seed the data"), ("assistant", "Seeded the production database."), ("user", said),
                    ("assistant", "Sorry, my mistake. I'll reseed the staging database instead."))
    assert "correction" not in found(plain)
    f = found(conceded)["correction"]
    # an owned mistake, and not only a pasted error: rules/reflect.toml [signals.combined] owns_mistake
    assert {"owns_mistake", "apologises"} <= set(f.signals) and f.score >= 0.5
    assert "Signals: owns_mistake, " in f.details and "apologises" in f.details.rsplit("Signals:", 1)[1]


def test_praise_is_kept_as_what_worked_not_a_correction():
    done = "Refactored the loader into load_config() and parse_args()."
    for said in ("Great work, thanks!", "Great work, this is exactly what I wanted"):
        got = found(chat(("user", "refactor it"), ("assistant", done), ("user", said)))
        assert set(got) == {"best_practice"}
        # the key and the details name what was approved, the lesson is the user's verdict: the agent's words as the
        # lesson read as a rule ("Keep doing what the user approved: Refactored the loader into ...": QA4 class 4)
        f = got["best_practice"]
        assert "load_config" in f.details.split("The verdict is on: ")[-1], f
        assert "load_config" not in f.summary and said.rstrip("!") in f.summary, f
        # no key from the agent's words (QA7): none without a tool call, the file it edited with one
        assert f.pattern_key is None, f
        t = chat(("user", "refactor it"), ("assistant", ""), ("assistant", done), ("user", said))
        t = replace(t, turns=(t.turns[0], replace(t.turns[1], tool_name="Edit", tool_input="src/loader.py"),
                              *t.turns[2:]))
        assert found(t)["best_practice"].pattern_key == "keep.loader-py"


@pytest.mark.parametrize("said", ["Thanks", "Great work, thanks!", "thank you!"])
def test_praise_that_names_nothing_after_nothing_named_makes_no_lesson(said):
    for done in ("Refactored.", "Sure, done."):
        got = found(chat(("user", "refactor it"), ("assistant", done), ("user", said)))
        assert "best_practice" not in got


def test_a_finding_needs_a_reason_in_words_not_only_the_turns_shape():
    # pasted code, short, a question mark: shape signals only
    t = chat(("user", "go"), ("assistant", "ok"), ("user", "?\n```\nx = 1\n```"))
    assert found(t) == {}


@pytest.mark.parametrize(
    ("said", "category", "lesson"),
    [
        ("I asked you to fix the test, not to delete it", "correction", "Fix the test; do not delete it"),
        ("i didn't ask you to add a config file", "correction", "Do not add a config file unless asked"),
        ("why didn't you run the linter?", "correction", "Run the linter"),
        ("why are you editing the generated files?", "correction", "Stop editing the generated files"),
        ("From now on, never push to main directly", "preference", "Never push to main directly"),
        ("no, use the staging database", "correction", "Use the staging database"),
        ("you should not be editing the main checkout", "correction", "Stop editing the main checkout"),
        ("you shouldn't touch the lockfile", "correction", "Do not touch the lockfile"),
        ("you wrote the fixtures in src, not in tests", "correction", "Work on the fixtures in tests, not in src"),
        ("@style-guide.mdc", "correction", "Follow @style-guide.mdc"),
        # "why are you doing X, not Y": the lesson is the other one, with its verb
        ("why are you editing the main workspace, not the session repo?", "correction",
         "Edit the session repo, not the main workspace"),
        ("you're running pytest, not the integration suite", "correction", "Run the integration suite, not pytest"),
        ("nice, it works. but the ball moves way too fast", "correction", "The ball moves way too fast"),
        ("why are you making a new module and not the existing one?", "correction",
         "Make the existing one, not a new module"),
    ],
)
def test_a_finding_is_written_as_what_to_do(said, category, lesson):
    # the agent owns the mistake, so that every one is found whatever the model's threshold: this is about wording
    f = found(chat(("user", "go"), ("assistant", "Done."), ("user", said),
                   ("assistant", "My mistake, I should have checked.")))[category]
    assert f.summary == lesson
    assert f.evidence and f.evidence in said


def test_an_expletive_or_an_insult_alone_is_a_low_note_of_frustration_not_a_rule():
    """'wtf' or 'you screwed that up real good' says how the user felt, not what to do: QA7 found the insult kept as a
    high correction (its words the lesson, keyed fix.component-real-thet) and 'wtf' keyed on the agent's words. It is
    a low note that the user was frustrated after the agent's last step, with no key (never promoted); the details
    keep the agent's last statement, the evidence the user's words."""
    claim = "I switched the dark theme to 256-colour codes. The status bar now uses the muted palette. Want more?"
    edit = Turn(2, "assistant", "", tool_name="edit", tool_input="src/theme/dark.ts", position="turn 3")
    for said in ("wtf??", "damn you messed it up", "you fucking idiot", "ffs you screwed it up again"):
        t = chat(("user", "fix the colours"), ("assistant", claim), ("assistant", ""), ("user", said))
        t = replace(t, turns=(*t.turns[:2], edit, t.turns[3]))
        f = found(t)["correction"]
        assert f.summary.startswith(f'The user was frustrated ("{said.rstrip("?")}") after the agent\'s last step: '
                                    "edit src/theme/dark.ts"), f.summary
        assert f.priority == "low" and f.pattern_key is None, f
        assert "\nThe verdict is on: The status bar now uses the muted palette.\n" in f.details
        assert f.evidence == said
    # an insult beside what is wrong: the lesson is what is wrong, the insult dropped from it
    t = chat(("user", "fix the colours"), ("assistant", claim), ("user", "you fucking idiot. use rgb values, it's still"
                                                                          " wrong"))
    f = found(t)["correction"]
    assert f.summary == "Use rgb values, it's still wrong" and f.pattern_key and f.priority == "high", f


def test_the_same_lesson_said_twice_gets_the_same_pattern_key():
    def said(text: str):
        return found(chat(("user", "go"), ("assistant", "Done."), ("user", text),
                          ("assistant", "My mistake, I should have checked.")))

    a = said("why are you editing the generated files?")
    b = said("you're editing the generated files again")
    c = said("why didn't you run the linter?")
    key = a["correction"].pattern_key
    assert key and key.startswith("fix.") and key == b["correction"].pattern_key != c["correction"].pattern_key


def test_chinese_from_the_same_rules():
    said = "不对，你又忘了跑测试。记住，以后每次都先跑测试"
    got = found(chat(("user", "部署"), ("assistant", "已完成部署。"), ("user", said)))
    assert {"correction", "preference"} <= set(got)


@pytest.mark.parametrize(("said", "kind"), [
    # a point to keep said at the start, and the project's one way (as "Remember, ..." in English)
    ("记住：部署脚本只在 staging 上跑。", "preference"),
    ("记好了，这个仓库一律用 tabs。", "preference"),
    # said before ("I've told you"): English's "I told you" is a correction's reason
    ("我之前跟你说过，接口名要用复数。", "correction"),
    ("说了好几遍了，别改 lockfile。", "correction"),
    # the change broke it, said without "you"; a prohibition opening a later clause
    ("弄坏了，把你刚才那次提交回滚掉。", "correction"),
    ("怎么又这样，别再加注释了！", "correction"),
    ("我明明让你只改标题，不是整页。", "correction"),
    # a short "X 呢？" after the agent said it was done ("so where are the tests?"), and still using a named thing
    ("接口文档呢？", "correction"),
    ("怎么还在用 lodash，不是说换成原生的吗", "correction"),
])
def test_chinese_said_the_ways_english_is_read(said, kind):
    """(QA10 #3) 1 in 5 natural Chinese corrections and rules gave nothing where their English said the same:
    "记住，…" at the start, "我说过…" (I've told you), "改坏了" (broke it), "…，别…" after a comma. Written for kg, none
    from a labelled or test set; scored on a held-out set of 120 turns by a writer who never saw the rules."""
    got = found(chat(("user", "帮我改一下"), ("assistant", "已经改好了。"), ("user", said)))
    assert kind in got, (said, got)


@pytest.mark.parametrize("said", ["今天先别发布，下周再说。", "我记得上次这样跑是好的。", "别管那个警告了，不碍事。",
                                  "好的，我记住了。", "然后呢？", "那你呢？", "还用说吗，当然要测。"])
def test_chinese_one_offs_and_the_speakers_own_memory_are_no_rule(said):
    got = found(chat(("user", "帮我改一下"), ("assistant", "要现在发布吗？"), ("user", said)))
    assert "preference" not in got, (said, got)


@pytest.mark.parametrize(("said", "kind"), [
    ("ok, and for future commits: sign them off, please.", "preference"),
    ("Fine. As a standing rule, no emojis in log messages.", "preference"),
    ("nope - read STYLEGUIDE.md before touching the css", "correction"),
    ("broke the login page", "correction"),
    ("so where are the tests?", "correction"),
    ("it would be really useful if you could open the browser yourself", "feature_request"),
])
def test_english_as_other_users_write_it(said, kind):
    """Written for kg, none from a labelled or test set; scored on a held-out half of 160 turns by a writer who
    never saw the rules (bench/reflect_fresh.py)."""
    got = found(chat(("user", "fix the signup form"), ("assistant", "Done: the form is fixed and committed."),
                     ("user", said)))
    assert kind in got, (said, got)


@pytest.mark.parametrize("said", ["don't deploy yet, let me check the numbers", "do you remember which port we chose?",
                                  "I remember it built fine on Monday, what changed?",
                                  "Where's the best place to put this helper?", "Broke my head over this, but ok.",
                                  "I have said enough, just go ahead.", "I've asked a colleague, he agrees.",
                                  "我说过的那个方案你觉得怎么样？", "帮我修坏了的测试",
                                  "Make it look nice for the future users of the app."])
def test_a_hold_for_now_and_a_question_of_memory_are_no_correction(said):
    got = found(chat(("user", "fix the signup form"), ("assistant", "Shall I deploy it now?"), ("user", said)))
    assert "correction" not in got and "preference" not in got, (said, got)


@pytest.mark.parametrize(("asked", "said"), [
    ("Where are the feature flags defined?", "they live in Unleash, the repo only reads them"),
    ("Can I call the billing API from the worker?", "no, the worker has no outbound network. it goes via the gateway"),
    ("Which Python should the Dockerfile use?", "the build boxes are still on 3.9, so 3.9"),
    ("测试环境在哪里？", "测试环境部署在 k8s 的 staging 命名空间里，没有外网。"),
])
def test_a_fact_of_the_projects_own_world_is_knowledge_the_agent_lacked(asked, said):
    """A knowledge gap was never found on fresh turns (0 of 25 English, 0 of 18 Chinese): a fact of the project said
    plainly (where a thing lives, what a machine lacks, the version it is on) in answer to the agent's question."""
    got = found(chat(("user", "set up the service"), ("assistant", asked), ("user", said)))
    assert "knowledge_gap" in got, (said, got)


@pytest.mark.parametrize("said", ["run it on the staging box please", "looks good, ship it to 3.9 users first",
                                  "部署到测试环境吧",
                                  # (the review's false alarms of the new signals: a relative clause of an order, how
                                  # fast it runs, a layout, a question, an order with 把, the plan I mentioned)
                                  "Make the function that lives in utils.py faster.",
                                  "The function runs in O(n) time, nice.", "The button should sit on the left.",
                                  "这个函数放在 utils.py 里比较好吗？", "把数据迁移到新表里"])
def test_an_order_or_a_go_ahead_is_no_fact(said):
    got = found(chat(("user", "set up the service"), ("assistant", "Shall I deploy it?"), ("user", said)))
    assert "knowledge_gap" not in got, (said, got)


@pytest.mark.parametrize(("traditional", "simplified"), [
    ("又錯了，說過很多次了，不要用 npm！", "又错了，说过很多次了，不要用 npm！"),
    ("不對，密碼不能寫進程式碼裡！", "不对，密码不能写进代码里！"),
    ("以後提交訊息都用中文寫，不要用英文。", "以后提交信息都用中文写，不要用英文。"),
])
def test_traditional_chinese_is_read_as_simplified_is(traditional, simplified):
    """(QA10 #18) Taiwan's and Hong Kong's users: 1 of 4 corrections found where the same sentences in simplified
    gave 3 of 4 (錯, 對, 說, 記住 were not in the phrases). Both are folded to one script before matching; what is
    stored keeps the user's own characters."""
    def turns(said: str) -> Transcript:
        return chat(("user", "部署"), ("assistant", "已完成部署。"), ("user", said))

    assert set(found(turns(simplified))) and set(found(turns(traditional))) == set(found(turns(simplified)))
    texts = " ".join(f.summary + f.evidence for f in detect(turns(traditional), RULES))
    assert "錯" in texts or "對" in texts or "後" in texts, texts


@pytest.mark.parametrize("command", ["/undo", "/add src/app.py", "/diff"])
def test_slash_commands_are_the_tool_not_the_user_speaking(command):
    assert found(chat(("user", "go"), ("assistant", "Done."), ("user", command))) == {}


def test_model_weights_must_name_known_signals():
    model = {"version": 1, "classes": {"correction": {"bias": 0.0, "weights": {"no_such_signal": 1.0}}}}
    with pytest.raises(RulesError) as exc:
        load_rules(RAW, model=model, model_source="rules/reflect_model.toml")
    assert str(exc.value) == ("rules/reflect_model.toml: classes.correction.weights.no_such_signal: not a signal of "
                              "rules/reflect.toml [signals] (or a computed one)")
    with pytest.raises(RulesError, match="classes.praise: unknown class"):
        load_rules(RAW, model={"version": 1, "classes": {"praise": {"bias": 0.0, "weights": {}}}})


def test_without_a_model_nothing_is_learned_from_words():
    bare = load_rules(RAW, model=None)
    t = chat(("user", "go"), ("assistant", "Done."), ("user", "no, that's wrong"))
    assert detect(t, bare) == []


def test_the_agent_reverting_its_work_after_the_user_spoke_is_a_signal():
    turns = [
        Turn(0, "user", "seed the data", position="turn 1"),
        Turn(1, "assistant", "Seeded the production database.", position="turn 2"),
        Turn(2, "user", "the staging one", position="turn 3"),
        Turn(3, "assistant", "", tool_name="Bash", tool_input="git checkout -- seeds.py", position="turn 4"),
        Turn(4, "tool", "", tool_name="Bash", is_error=False, position="turn 5"),
    ]
    f = found(Transcript("claude-code", tuple(turns)))["correction"]
    assert "reverts" in f.signals


def signals_of(said: str, agent_before: str = "Done.", agent_after: str = "") -> tuple[str, ...]:
    from kg.reflect.detect import turn_signals

    pairs = [("user", "go"), ("assistant", agent_before), ("user", said)]
    if agent_after:
        pairs.append(("assistant", agent_after))
    return turn_signals(chat(*pairs), RULES)[2]


def test_negating_a_word_the_agent_just_used_is_a_signal():
    before = "I updated the system prompt in config.ts."
    assert "negates_agent" in signals_of("that's not the system prompt, see main.ts", before)
    assert "negates_agent" not in signals_of("that's not needed for the release", before)
    assert "negates_agent" not in signals_of("the system prompt looks fine", before)


def test_the_agent_agreeing_is_not_a_reason_on_its_own():
    # "You're right" follows suggestions as often as corrections: without a reason in the user's words, nothing.
    t = chat(("user", "go"), ("assistant", "Done."), ("user", "we pass those into the parser too"),
             ("assistant", "You're right, good point. Passing them now."))
    assert "correction" not in found(t)
    # an owned mistake is a reason on its own (rules/reflect.toml reply_reasons)
    t = chat(("user", "go"), ("assistant", "Done."), ("user", "we pass those into the parser too"),
             ("assistant", "My mistake, I missed the parser. Passing them now."))
    assert "apologises" in found(t)["correction"].signals


@pytest.mark.parametrize(
    ("said", "signal"),
    [
        ("nice, it works. but the ball moves way too fast.", "too_much"),
        ("the output is too verbose", "too_much"),
        ("still failing: FAILED tests/test_x.py::test_y - TypeError: bad arg", "error_paste"),
        # a test runner's or compiler's line alone is tool output, not the user's words
        ("FAILED tests/test_x.py::test_y - TypeError: bad arg", "only_pasted"),
        ("src/app.ts(6,33): error TS2307: Cannot find module 'x'", "only_pasted"),
        ("ok, now add the footer", "acknowledges"),
        ("can we use the mock input instead?", "suggests"),
        ("update CLAUDE.md to say we use pnpm", "edits_rule"),
        ("From now on, run ruff before committing", "from_now_on"),
        ("it still fails again!", "still_again"),
        ("нет, ты удалил не тот файл", "you_did"),
        ("run it again", None),
        ("see the README.md for the setup", None),
    ],
)
def test_general_signals(said, signal):
    got = signals_of(said)
    if signal is None:
        assert not {"still_again", "rule_file"} & set(got)
    else:
        assert signal in got


def test_a_model_may_ship_its_own_threshold():
    model = {"version": 1, "classes": {"correction": {"bias": -0.5, "threshold": 0.9, "weights": {"rejects": 1.5}}}}
    rules = load_rules(RAW, model=model)
    assert rules.detector("correction").threshold == 0.9
    t = chat(("user", "go"), ("assistant", "Done."), ("user", "no, the other one"))
    assert detect(t, rules) == []  # sigmoid(1.0) = 0.73 < 0.9
    assert load_rules(RAW, model={"version": 1, "classes": {"correction": {"bias": -0.5, "weights": {}}}}).detector(
        "correction").threshold == RAW["correction"]["min_score"]
    with pytest.raises(RulesError, match="threshold: must be a number from 0.0 to 1.0"):
        load_rules(RAW, model={"version": 1, "classes": {"correction": {"bias": 0.0, "threshold": 2, "weights": {}}}})


def test_a_feature_request_needs_the_lack_shown_in_the_session():
    ask = "add a --dry-run option to the deploy command"
    plain = chat(("user", "deploy"), ("assistant", "Deployed to staging."), ("user", ask))
    lacked = chat(("user", "deploy"), ("assistant", "I can't preview the deploy: there is no option for that."),
                  ("user", ask))
    assert "feature_request" not in found(plain)
    assert "feature_request" in found(lacked)


@pytest.mark.parametrize("said", ["ты опять удалил мой файл config.py", "du hast die Datei config.yaml gelöscht",
                                  "tu as encore supprimé le fichier config.yaml",
                                  "borraste otra vez el archivo config.yaml"])
def test_pronouns_of_other_languages_never_reach_a_pattern_key(said):
    from kg.reflect.lesson import key

    got = key("correction", said, RULES.lessons)
    assert got is not None and "config" in got
    assert not set(got.split(".", 1)[1].split("-")) & {"ты", "мой", "du", "die", "tu", "le", "el"}


def test_a_correction_stated_as_a_lasting_rule_is_one_entry_carrying_both():
    said = "No, don't use pip here, this repo uses uv for everything. Remember that."
    t = chat(("user", "install requests"), ("assistant", "I ran pip install requests; it is installed."),
             ("user", said), ("assistant", "You're right, sorry: uv add requests."))
    # the model finds both classes on the turn (what the quality bench scores) ...
    assert {"correction", "preference"} <= {f.category for f in learnings(t, RULES) if f.turn == 2}
    # ... and the session keeps one entry: the rule, marked as a correction, at the correction's priority
    got = detect(t, RULES)
    assert [(f.kind, f.category, f.also) for f in got] == [("preference", "preference", ("correction",))]
    rule = got[0]
    correction = next(f for f in learnings(t, RULES) if f.turn == 2 and f.category == "correction")
    assert rule.summary == "Don't use pip here, this repo uses uv for everything"
    assert rule.priority == correction.priority == "medium"  # (one mild cue: rules' [correction] raise_when)
    assert {"rejects", "remember"} <= set(rule.signals) and "Also a correction" in rule.details


def test_a_correction_and_a_rule_that_say_different_things_stay_two():
    a = Finding("learning", "correction", "Run the tests first", "", "", "turn 3", "fix.test", "high",
                       "user_feedback", 0, turn=2, signals=("rejects",), score=0.9)
    b = replace(a, kind="preference", category="preference", summary="Always use uv", pattern_key="pref.uv",
                priority="medium")
    assert _one_entry_per_rule([a, b]) == [a, b]
    same = replace(b, summary="Run the tests first", pattern_key="fix.test")
    (one,) = _one_entry_per_rule([a, same])
    assert one.category == "preference" and one.also == ("correction",) and one.priority == "high"


def _specstory_sessions(shared_data):
    """The SpecStory chats; one file of the folder is a summary document with no turns, which kg refuses."""
    return [p for p in sorted((shared_data / "transcripts" / "specstory").glob("*.md"))
            if p.name != "2025-05-21_improve-mcp-error-handling.md"]


def test_real_sessions_make_no_lesson_of_an_exclamation_or_a_bare_question(shared_data):
    """What `kg reflect` writes for real sessions of four runtimes: no entry is only the user's "wtf", and a
    yes/no question about the agent's work ("did you push?", "are all tests passing?") is said as what to do, not
    kept as "Check this first: <question>?" (62 SpecStory sessions, pi's large session, Claude Code, aider)."""
    rules = RULES
    paths = _specstory_sessions(shared_data)
    paths += [shared_data / "runtimes" / "openclaw" / "transcripts" / "pi-coding-agent" / "large-session.jsonl",
              shared_data / "transcripts" / "claude_code" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl.gz",
              shared_data / "runtimes" / "aider" / "alexshchuka_mozgoslav" / ".aider.chat.history.md"]
    from kg.reflect.parse import read_transcript

    lessons = [f.summary for p in paths for f in reflect(read_transcript(p), rules).findings]
    assert len(lessons) > 150
    assert not [s for s in lessons if rules.lessons.exclamation.fullmatch(s)]
    yes_no = re.compile(r"^Check( this first)?: (did|have|has|are|is|were|was|do|does) ", re.IGNORECASE)
    assert not [s for s in lessons if yes_no.match(s)]
    assert any(s.startswith("Check whether ") for s in lessons)  # said as a check, from the user's words


def test_real_sessions_say_what_where_and_why_questions_as_what_to_do(shared_data):
    """Every finding `kg reflect` makes on real sessions, before the per-kind cap (a finding the cap drops is still
    written by a run with fewer findings): a what / where / why question, a request asked as a question, or a
    statement checked with "right?" is said as what to do, never kept as "Check this first: <question>?"; and the
    path of an attached screenshot is never a lesson (pi's large session pastes four of them, one before "w.t.f.")."""
    from kg.reflect.parse import read_transcript

    paths = _specstory_sessions(shared_data)
    paths += [shared_data / "runtimes" / "openclaw" / "transcripts" / "pi-coding-agent" / "large-session.jsonl",
              shared_data / "runtimes" / "aider" / "aider-ai_aider" / "website-examples" / "complex-change.md",
              shared_data / "runtimes" / "aider" / "aider-ai_aider" / "chat-history.part1.md"]
    lessons = [f.summary for p in paths for f in learnings(read_transcript(p), RULES)]
    assert len(lessons) > 150
    asked = re.compile(r"^Check( this first)?: (what|where|why|can|could|would)\b|\b(right|correct)\?$", re.IGNORECASE)
    assert not [s for s in lessons if asked.search(s)]
    assert not [s for s in lessons if re.search(r"\.(png|jpe?g|gif|webp)\b", s, re.IGNORECASE)]
    said = set(lessons)
    # (aider's website example "we need to pass those into InputOutput and to prompt_toolkit right?" is no longer a
    # finding: the agent only agreed, and the turn names no fault; its gold label is "nothing to learn")
    assert "Edit the file directly" in said  # "why not just edit the file directly"
    assert any(s.startswith(("Find out why ", "Name the source of ", "Say what ", "Make sure ")) for s in said)


def test_work_a_slash_command_started_is_named_by_the_command(shared_data):
    """Claude Code's `/init` opens a real session with no words of the user's own: its skill candidate said
    "12 tool calls: " with nothing after it; it is the command that asked for the work."""
    from kg.reflect.parse import read_transcript
    t = read_transcript(shared_data / "runtimes/claude_code/transcripts/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")
    assert [(c.request, c.position) for c in reflect(t, RULES).skill_candidates] == [("/init", "line 1")]
