"""Text as real users write it (a QA pass on text): joiners inside Persian words and emoji kept, keys and lines
given in NFD found as the NFC they are stored in, Graphviz-sized attributes, the real option in a length error, and
code holding backticks kept whole in Markdown."""

from __future__ import annotations

ZWNJ, ZWJ = "\u200c", "\u200d"


def test_joiners_inside_persian_words_and_emoji_are_kept_and_searchable(ws, run_kg):
    """U+200C/U+200D were stripped from every text: `می‌کنیم` was stored `می کنیم` (two words) in the summary and
    `میکنیم` in --details, the family emoji became three people."""
    said = f"کاربر گفت: از pnpm استفاده می{ZWNJ}کنیم"
    family = f"👨{ZWJ}👩{ZWJ}👧"
    details = f"family {family} and می{ZWNJ}خواهم; a hidden pass{ZWJ}word\u200b joiner"
    done = run_kg(["log", "learning", said, "--details", details, "--tags", family, "--wait", "--json"])
    assert done.exit_code == 0, done.stderr
    node = run_kg(f"show {done.json['id']} --json").json["node"]
    assert node["text"] == said
    # between two ASCII letters a joiner only hides a word: dropped, as a zero-width space is
    assert node["details"] == f"family {family} and می{ZWNJ}خواهم; a hidden password joiner"
    assert node["tags"] == [family]
    for query in (f"می{ZWNJ}کنیم", "کنیم", "password"):
        found = run_kg(["search", query, "--json"])
        assert found.exit_code == 0, found.stderr
        assert done.json["id"] in [h["ref"] for h in found.json], query
