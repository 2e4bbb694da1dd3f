"""A lesson is a well-formed entry (issue 14 item 2): code keeps its spelling, a pasted command is never the lesson
nor its evidence, the cut is said. Real transcript lines where they show it (tests/conftest.py `shared_data`)."""

from __future__ import annotations

import re

import pytest

from kg.reflect import default_rules, read_transcript
from kg.reflect.detect import learnings, reflect
from kg.reflect.lesson import command_line, key, phrase

RULES = default_rules()
SPEC = "transcripts/specstory/"


def lesson(said: list[str], category: str = "correction") -> str:
    return phrase(category, said, said[0], RULES.lessons)[0]


@pytest.mark.parametrize(("said", "expected"), [
    # aider (chat-history.part1.md:22116): main wrote "From_coder should ...", a name no code holds
    (["from_coder should also copy the read only files"], "from_coder should also copy the read only files"),
    (["aider.repomap.RepoMap must not be called with --map-tokens 0"],
     "aider.repomap.RepoMap must not be called with --map-tokens 0"),
    (["getUser returns the cached row"], "getUser returns the cached row"),
    (["the parser drops the last line"], "The parser drops the last line"),  # prose still opens with a capital
])
def test_a_lesson_opening_with_code_keeps_its_spelling(said, expected):
    assert lesson(said) == expected


def test_a_pasted_command_is_neither_the_lesson_nor_its_evidence(shared_data):
    """"when i run this, i see no stats" above the command it ran ("bun run . git pr --path ../chitin"): main chose the
    command, the one sentence that gave a key, as the lesson ("Git pr --path ../chitin") and as the evidence."""
    t = read_transcript(shared_data / (SPEC + "2025-04-26_20-30-setting-up-minsky-cli-with-bun.md"))
    (f,) = [f for f in reflect(t, RULES).findings if t.turns[f.turn].line == 2722]
    assert "no stats" in f.summary and "--path" not in f.summary, f.summary
    assert f.evidence == "when i run this, i see no stats", f.evidence
    assert "git pr --path ../chitin" in f.details  # the command stays in what the user said
    # the words say little ("stats"): the key takes the names of the command they point at, not its flags or path
    assert f.pattern_key == "fix.bun-git-stat", f.pattern_key


@pytest.mark.parametrize(("sentence", "pasted"), [
    ("git pr --path ../chitin", True),
    ("bun run . git pr --path ../chitin", True),
    ("run it with --verbose", False),  # the user's sentence about a flag
    ("use --force when you push", False),
    ("see src/app.py for the fix", False),
])
def test_what_is_a_pasted_command(sentence, pasted):
    assert command_line(sentence, RULES.lessons) is pasted


def test_a_long_lesson_is_cut_where_a_clause_ends_and_a_little_longer_one_kept_whole(shared_data):
    """QA4 class 5: the 120-character cut left "... and then go ahead and…" and "... is that rule really…" (specstory
    2025-04-30_19-17:3464, 2025-04-28_18-34:912). A lesson up to rules' summary_whole_chars is kept whole; a longer
    one is cut where a clause ends, outside backticks and brackets, and says so."""
    t = read_transcript(shared_data / (SPEC + "2025-04-30_19-17-task-011-worklog-and-commit-review.md"))
    (cut,) = [f.summary for f in reflect(t, RULES).findings if t.turns[f.turn].line == 3464]
    assert cut == ("Produce it as markdown, including a conventional commits-formatted title (like `feat(#011): ...`)…"
                   ), cut
    t = read_transcript(shared_data / (SPEC + "2025-04-28_18-34-create-minsky-task-command.md"))
    (whole,) = [f.summary for f in reflect(t, RULES).findings if t.turns[f.turn].line == 912]
    assert whole.endswith("is that rule really necessary"), whole
    assert RULES.limits.summary_chars < len(whole) <= RULES.limits.summary_whole_chars
    # a lesson of two sentences too long for both keeps its first whole (2025-04-28_16-22:593, a rule joined with
    # "document this ..."; it was cut to "Never ask me questions like "Would you like to proceed with ...?"…")
    t = read_transcript(shared_data / (SPEC + "2025-04-28_16-22-backlog-task-inquiry.md"))
    (first,) = [f.summary for f in reflect(t, RULES).findings if t.turns[f.turn].line == 593]
    assert first.endswith("if it seems obvious that those are the natural next steps that i would ask for…"), first


@pytest.mark.parametrize(("lesson", "cut"), [
    ("Keep the retry loop in client.py small enough to read in one screen, " + "x " * 80,
     "Keep the retry loop in client.py small enough to read in one screen…"),
    # a clause ending before half the limit leaves too little: a word's end
    ("Keep the retry loop in client.py small, " + "x " * 80,
     "Keep the retry loop in client.py small, " + "x " * 39 + "x…"),
    ("Run " + "the tests " * 30, "Run " + "the tests " * 11 + "the…"),  # no clause: a whole word
])
def test_shorten(lesson, cut):
    from kg.reflect.lesson import shorten

    assert shorten(lesson, 120, 160) == cut


def _agents_words_in(lesson: str, agent: str, user: str) -> str | None:
    """The first run of five words of `lesson` that the agent said and the user did not, else None."""
    words = re.findall(r"[\w'./@-]+", lesson.rstrip("…"))
    agent, user = " ".join(re.findall(r"[\w'./@-]+", agent)), " ".join(re.findall(r"[\w'./@-]+", user))
    for i in range(len(words) - 4):
        run = " ".join(words[i:i + 5])
        if run in agent and run not in user:
            return run
    return None


@pytest.mark.parametrize("name", [
    "runtimes/openclaw/transcripts/pi-coding-agent/large-session.jsonl",
    "runtimes/aider/aider-ai_aider/chat-history.part1.md",
    "runtimes/aider/aider-ai_aider/website-examples/complex-change.md",
    "runtimes/aider/alexshchuka_mozgoslav/.aider.chat.history.md",
])
def test_no_lesson_is_built_from_the_agents_own_words(shared_data, name):
    """QA4 class 4: 'Check this before handing it back (the user answered "wtf"): In VS Code: Check if GPU
    acceleration is enabled/disabled…' (pi, line 367), 'The user meant "...", after: These modifications will make the
    script consider only…' (aider 5499), 'Keep doing what the user approved ("nice, that worked"): These changes will
    replace…' (complex-change.md 366). An agent reads a lesson as its rule: the agent's words may be the context in
    the details, never the lesson."""
    t = read_transcript(shared_data / name)
    borrowed = []
    for f in reflect(t, RULES).findings:
        before = " ".join(x.text for x in t.turns[max(0, f.turn - 12):f.turn] if x.role != "user")
        run = _agents_words_in(f.summary, before, t.turns[f.turn].text)
        if run:
            borrowed.append((t.turns[f.turn].line, f.summary))
    assert not borrowed, borrowed


def _keys_by_line(shared_data, name: str) -> dict[int, str | None]:
    t = read_transcript(shared_data / name)
    return {t.turns[f.turn].line: f.pattern_key for f in learnings(t, RULES)}


AIDER = "runtimes/aider/aider-ai_aider/chat-history.part1.md"


def test_a_short_lesson_that_names_one_thing_gets_a_key(shared_data):
    """QA4 (e): "Get not post" (aider 8640) and "Use minsky" (specstory 2025-04-29_16-45:73) had no key, so they could
    never recur; a short order or contrast keys on the one thing it names. Praise and remarks of a few words keep
    none, and different things keep different keys."""
    assert _keys_by_line(shared_data, AIDER)[8640] == "fix.post"
    assert _keys_by_line(shared_data, SPEC + "2025-04-29_16-45-available-tasks-inquiry.md")[73] == "fix.minsky"
    got = {s: key("correction", s, RULES.lessons) for s in ("Use pnpm", "Use minsky", "Thanks, Claude", "Try again",
                                                          "Be careful", "That's not markdown")}
    assert got == {"Use pnpm": "fix.pnpm", "Use minsky": "fix.minsky", "Thanks, Claude": None, "Try again": None,
                   "Be careful": None, "That's not markdown": None}


def test_the_same_lesson_said_twice_in_a_session_gets_one_key(shared_data):
    """QA4 (e), aider: "Mock RepoMap and ensure it is not called" (2918) and "Mock aider.repomap.RepoMap ..." (3585)
    keyed fix.ensur-mock-repomap and fix.aider-ensur-repomap; "Don't paginate cmd_web from Coder" (24746) and "In
    coder, call cmd_web with paginate=false" (24870) keyed apart too. A dotted name keys on its last part, and names
    as code writes them (RepoMap, cmd_web, paginate=) rank first."""
    keys = _keys_by_line(shared_data, AIDER)
    assert keys[2918] == keys[3585] == "fix.ensur-mock-repomap"
    assert keys[24746] == keys[24870] == "fix.cmd-paginat-web"
    assert key("correction", "Follow @dont-ignore-errors.mdc", RULES.lessons) == "fix.error-ignor-mdc"  # files stay


def test_a_corrections_priority_is_graded_from_what_fired(shared_data):
    """QA4 (d): every correction was "high" whatever it said ("Try again", "Get not post"). One mild cue is "medium";
    said again, still wrong, after a claim of done, or angrily is "high" (rules' [correction] raise_when)."""
    t = read_transcript(shared_data / AIDER)
    by_line = {t.turns[f.turn].line: f for f in learnings(t, RULES) if f.category == "correction"}
    assert by_line[8640].priority == "medium", by_line[8640].signals  # "get not post"
    t = read_transcript(shared_data / "runtimes/openclaw/transcripts/pi-coding-agent/large-session.jsonl")
    by_line = {t.turns[f.turn].line: f for f in learnings(t, RULES) if f.category == "correction"}
    # "wtf" after the agent's answer: the user's frustration, a low note, never a rule (kg.reflect.verdict)
    assert by_line[367].priority == "low", by_line[367].signals
    priorities = {f.priority for f in by_line.values()}
    assert priorities == {"low", "medium", "high"}, priorities


def test_a_prohibition_said_beside_what_to_do_is_one_lesson_with_it(shared_data):
    """QA4 class 6: the half a signal matched was the lesson. "In CONVENTIONS.md , reorder the lists. DO NOT CHANGE
    the contents." gave "In CONVENTIONS.md , reorder the lists" (aquaticat 2581), and "no, don't mock completion. mock
    the httpx library which completion uses ..." gave "Don't mock completion" (aider 8558)."""
    t = read_transcript(shared_data / "runtimes/aider/aquaticat_monochromatic/.aider.chat.history.md")
    (got,) = [f.summary for f in learnings(t, RULES) if t.turns[f.turn].line == 2581]
    assert got == "In CONVENTIONS.md , reorder the lists; DO NOT CHANGE the contents", got
    t = read_transcript(shared_data / AIDER)
    (got,) = [f.summary for f in learnings(t, RULES) if t.turns[f.turn].line == 8558]
    assert got == ("Don't mock completion; mock the httpx library which completion uses to actually make the http "
                   "request"), got
    # two sentences that both forbid, or neither, stay apart; a question beside is no half of the rule
    assert lesson(["don't touch the lockfile.", "don't run npm audit fix."]) == "Don't touch the lockfile"
    assert lesson(["don't touch the lockfile.", "why did you?"]) == "Don't touch the lockfile"
    assert lesson(["5. dont overwrite, error.", "6."]) == "Dont overwrite, error"  # (specstory 2025-04-27_21-51)
