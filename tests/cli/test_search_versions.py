"""QA4 #9 and #8 on search, through the real CLI.

#9: a version or id joined by `.`, `-` or `:` (2.4.1, release-1.2, c0-D1:3) was split into its pieces and the
one-character pieces dropped: `kg search "2.4.1"` found nothing and showed the newest memory, "release 1.3"
ranked release-1.2 first and "release-1.2" tied 1.2, 1.3 and 1.20. Search now asks for one as its pieces in a
row, never fuzzily (2.4.0 is not 2.4.1).
#8: `unmatched` named words a shown hit holds: a word only a memory file holds (a session summary,
MEMORY.md) was never looked for there, since the graph holds it nowhere."""

from __future__ import annotations

import pytest

from kg.core.text import joined, joined_pattern, search_words
from kg.memory.ranking import coverage, query_terms

NOW = "2026-12-05T10:00:00"
TEXTS = ("deploy release-1.2 broke login", "deploy release-1.3 fixed login", "deploy release-1.20 hung on start",
         "upgrade to lib v2.4.1 breaks auth", "upgrade to lib v2.4.0 is fine", "session c0-D1:3 said hello",
         "session c0-D1:30 said goodbye")


@pytest.mark.parametrize(("text", "query", "inner"), [
    ("2.4.1", {"2 4 1": "2.4.1"}, {"2 4", "4 1", "2 4 1"}),
    ("lib v2.4.1", {"2 4 1": "v2.4.1"}, {"2 4", "4 1", "2 4 1", "v2 4", "v2 4 1"}),
    ("release-1.2 broke", {"release 1 2": "release-1.2"}, {"release 1", "1 2", "release 1 2"}),
    ("c0-D1:3", {"c0 d1 3": "c0-d1:3"}, {"c0 d1", "d1 3", "c0 d1 3"}),
    ("a read-only mode, Next.js", {}, set()),  # no digit: words, as before
    ("x.1.2.3.4.5.6.7.8", {}, set()),  # longer than JOINED_PIECES: its words
])
def test_joined_finds_versions_and_ids(text, query, inner):
    assert joined(text) == query
    assert set(joined(text, inner=True)) == inner
    assert inner <= search_words(text)


def test_a_version_is_matched_as_written_never_fuzzily():
    terms = query_terms("lib 2.4.1")
    assert terms == ["lib", "2 4 1"]
    assert coverage(terms, {}, search_words("upgrade to lib v2.4.1 breaks auth"), 80) == 1.0
    assert coverage(terms, {}, search_words("upgrade to lib v2.4.0 is fine"), 80) == 0.5
    assert coverage(["release 1 2"], {}, search_words("release-1.20"), 80) == 0.0
    assert [m for m in ("v2.4.1", "2.4.1", "2.4.10", "12.4.1") if __import__("re").search(joined_pattern("2 4 1"), m)] \
        == ["v2.4.1", "2.4.1"]


def _hits(run_kg, query: str) -> list[dict]:
    done = run_kg(["search", query, "--json", "--limit", "3", "--now", NOW])
    assert done.exit_code == 0, done.stderr
    return done.json


@pytest.mark.embedded_only("the side index asks a version as a phrase; a team graph's own query asks its words")
def test_versions_and_ids_are_found_whole_and_exact_first(ws, run_kg):
    for text in TEXTS:
        assert run_kg(["log", "learning", text, "--now", "2026-12-04T09:00:00", "--wait"]).exit_code == 0
    for query, first in (("2.4.1", TEXTS[3]), ("v2.4.1", TEXTS[3]), ("release 1.3", TEXTS[1]),
                         ("release-1.2", TEXTS[0]), ("release 1.20", TEXTS[2]), ("c0-D1:3", TEXTS[5]),
                         ("c0-D1:30", TEXTS[6])):
        hits = _hits(run_kg, query)
        assert hits[0]["text"] == first and hits[0]["match"] == "terms", (query, [h["text"] for h in hits])
        if len(hits) > 1:
            assert hits[1]["score"] < hits[0]["score"], (query, hits)
    only = _hits(run_kg, "2.4.1")  # v2.4.0 holds no 2.4.1: no word of it (the graph may bring it, linked)
    assert [h["parts"]["fuzzy"] for h in only if h["text"] == TEXTS[4]] in ([], [0.0]), only
    missing = _hits(run_kg, "upgrade lib 9.9")
    assert missing[0]["match"] == "partial" and missing[0]["unmatched"] == ["9.9"], missing
    other = _hits(run_kg, "release-1.9")  # its word "release" is held; the version is not (not 1.2's count)
    assert other[0]["match"] == "partial" and other[0]["unmatched"] == ["release-1.9"], other
    out = run_kg(["search", "upgrade lib 9.9", "--now", NOW]).stdout
    assert "(no memory holds '9.9': matched the other words)" in out, out


def test_unmatched_names_no_word_a_memory_file_holds(ws, run_kg):
    assert run_kg(["log", "learning", "the todo app build needs node 20", "--now", "2026-12-04T09:00:00",
                   "--wait"]).exit_code == 0
    (ws.root / "MEMORY.md").write_text("# Memory\n\n- the todo app is written with Nextjs\n",
                                                  encoding="utf-8")
    hits = run_kg(["search", "todo app nextjs", "--json", "--now", NOW]).json
    assert any("Nextjs" in h["text"] for h in hits), hits
    assert all(h["unmatched"] == [] for h in hits) and hits[0]["match"] == "terms", hits
    assert "no memory holds" not in run_kg(["search", "todo app nextjs", "--now", NOW]).stdout
    hits = run_kg(["search", "todo app qwertyuiop", "--json", "--now", NOW]).json  # held nowhere: still named
    assert hits[0]["unmatched"] == ["qwertyuiop"] and hits[0]["match"] == "partial", hits
