"""A query of common words only (`kg search "the"`, "a an of") finds nothing, on both sides, and says why. The
graph side never held them (its index leaves stopwords out) but the memory-file side searched for them, so
"the" returned whatever MEMORY.md and daily-log lines held "the". A query with a word besides them, a quoted
phrase, Chinese, still finds what it did."""

from __future__ import annotations

NOW = "--now 2026-11-30T12:00:00"
WHY = "only common words ({}): add a word that says what to look for"


def _history(run_kg, ws) -> None:
    (ws.root / "MEMORY.md").write_text("# Memory\n\nThe team writes here; the build runs on the CI box.\n",
                                       encoding="utf-8")
    for text, day in (("the test database was not running", 28), ("用户喜欢直接回答，不要解释太多", 29)):
        r = run_kg(f"log learning '{text}' --now 2026-11-{day}T10:00:00")
        assert r.exit_code == 0, r.stderr


def test_a_query_of_common_words_finds_nothing_and_says_why(run_kg, ws):
    _history(run_kg, ws)
    r = run_kg(f"search the {NOW}")
    assert (r.exit_code, r.stdout) == (0, f"No results for 'the': {WHY.format('the')}\n")
    r = run_kg(["search", "a an of", "--json", *NOW.split()])
    assert (r.exit_code, r.json) == (0, [])  # the JSON stays a list of hits: the reason goes to stderr
    assert r.stderr == f"No results: {WHY.format('a, an, of')}\n"
    r = run_kg(["search", '"The A"', *NOW.split()])
    assert r.stdout == f"No results for '\"The A\"': {WHY.format('the, a')}\n"
    r = run_kg(f"search 'x of' {NOW}")  # a lone letter is no term either (as in the graph's index)
    assert r.stdout == "No results for 'x of': only single letters and common words (x, of): add a word that says " \
        "what to look for\n"
    assert run_kg("search the --session ../../AGENTS").exit_code == 2  # bad input stays bad input


def test_a_word_besides_them_a_phrase_and_chinese_still_find(run_kg, ws):
    _history(run_kg, ws)
    for query, found in (("the database", "the test database was not running"),
                         ('"test database"', "the test database was not running"),
                         ("the build", "The team writes here; the build runs on the CI box."),
                         ("直接回答", "用户喜欢直接回答，不要解释太多")):
        hits = run_kg(["search", query, "--json", *NOW.split()]).json
        assert hits and hits[0]["text"] == found, (query, hits)
        assert run_kg(["search", query, "--json", *NOW.split()]).stderr == ""


def test_a_query_of_symbols_or_emoji_says_it_holds_no_word(run_kg, ws):
    """`kg search '🚀'` (entries do hold it) said "only common words (): ..." naming no word."""
    assert run_kg(["log", "learning", "deploy 🚀 after the tests pass", *NOW.split()]).exit_code == 0
    for query in ("🚀", "*", "%"):
        r = run_kg(["search", query, "--json", *NOW.split()])
        assert (r.exit_code, r.json) == (0, [])
        assert r.stderr == f"No results: no word to look for in {query!r} (kg searches words, not symbols or emoji): " \
            "add a word\n", r.stderr
