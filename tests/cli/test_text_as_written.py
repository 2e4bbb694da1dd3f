"""Text as real users write it (a QA pass on text): joiners inside Persian words and emoji kept, keys and lines
given in NFD found as the NFC they are stored in, Graphviz-sized attributes, the real option in a length error, and
code holding backticks kept whole in Markdown."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

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


def test_a_key_tag_or_area_given_decomposed_finds_what_was_stored_composed(ws, run_kg):
    """`kg log --pattern-key` stores an NFD key as NFC (café.build); `kg show`, `kg patterns show` and `kg resolve`
    with the same NFD key answered "no node / no pattern" (exit 2): every lookup argument is NFC now."""
    nfd_key, nfd_tag, nfd_area = "cafe\u0301.build", "re\u0301sume\u0301", "cafe\u0301"
    done = run_kg(["log", "error", "naive bug", "--pattern-key", nfd_key, "--tags", nfd_tag, "--area", nfd_area,
                   "--wait", "--json"])
    assert done.exit_code == 0, done.stderr
    assert done.json["pattern_key"] == "caf\u00e9.build"
    shown = run_kg(["show", nfd_key, "--json"])
    assert shown.exit_code == 0, shown.stderr
    assert shown.json["node"]["kind"] == "pattern" and shown.json["node"]["pattern_key"] == "caf\u00e9.build"
    pattern = run_kg(["patterns", "show", nfd_key, "--json"])
    assert pattern.exit_code == 0, pattern.stderr
    assert done.json["id"] in pattern.stdout
    tagged = run_kg(["graph", "query", f"tag:{nfd_tag}", "--json"])
    assert tagged.exit_code == 0, tagged.stderr
    assert done.json["id"] in tagged.stdout
    listed = run_kg(["list", "--area", nfd_area, "--json"])
    assert done.json["id"] in [n["id"] for n in listed.json]
    closed = run_kg(["resolve", nfd_key, "--status", "wont_fix", "--json"])
    assert closed.exit_code == 0, closed.stderr
    assert closed.json["status"] == "wont_fix"
    # a pattern split off under an NFD key is stored as `kg log` stores it, and found by it
    second = run_kg(["log", "error", "naive bug again", "--pattern-key", nfd_key, "--wait", "--json"]).json["id"]
    run_kg(["resolve", nfd_key, "--status", "active"])
    split = run_kg(["patterns", "split", nfd_key, second, "--key", "Na\u0308ive.build"])
    assert split.exit_code == 0, split.stderr
    moved = run_kg(["show", second, "--json"]).json["node"]
    assert moved["pattern_key"] == "n\u00e4ive.build"
    assert run_kg(["patterns", "show", "na\u0308ive.build"]).exit_code == 0


def test_why_finds_a_line_or_fragment_pasted_decomposed(ws, run_kg):
    """`kg why` compared lines as given: the NFD line was only a fuzzy candidate of the NFC line USER.md holds, an
    NFD fragment of it "not found"."""
    assert run_kg("pref set editor vim").exit_code == 0
    user = ws.root / "USER.md"
    user.write_text(user.read_text(encoding="utf-8") + "\n- Le café se prend sans sucre\n", encoding="utf-8")
    whole = run_kg(["why", "- Le cafe\u0301 se prend sans sucre", "--json"])
    assert whole.exit_code == 0, whole.stderr
    assert whole.json["source"] == "human" and whole.json["file"] == "USER.md", whole.stdout
    part = run_kg(["why", "cafe\u0301 se prend", "--json"])
    assert part.exit_code == 0, part.stderr
    assert [(c["match"], c["text"]) for c in part.json["candidates"]] == [
        ("fragment", "Le caf\u00e9 se prend sans sucre")]


def test_an_over_long_field_is_named_as_each_entry_point_takes_it(ws, run_kg, tmp_path):
    """`kg ingest` of a 1 MB `error` field said "error_text (--error-text) is ...": no such option exists (it is
    `--error`) and the line's field is `error`."""
    long = "E" * 200_001
    logged = run_kg(["log", "error", "huge single line error", "--error", long])
    assert logged.exit_code == 2
    assert logged.stderr.startswith("Error: --error is 200,001 characters; the limit is 200,000"), logged.stderr
    details = run_kg(["log", "error", "huge details", "--details", long])
    assert details.exit_code == 2 and "--details is 200,001 characters" in details.stderr
    lines = tmp_path / "in.jsonl"
    for key in ("error", "error_text", "user-context"):
        lines.write_text(json.dumps({"kind": "error", "summary": "huge single line error", key: long}) + "\n",
                         encoding="utf-8")
        ingested = run_kg(f"ingest {lines}")
        assert ingested.exit_code == 2
        assert f"in.jsonl:1: the field '{key}' is 200,001 characters" in ingested.stderr, ingested.stderr
        assert "--" not in ingested.stderr


def test_dot_export_cuts_a_value_past_graphviz_string_limit_with_a_marker(ws, run_kg, tmp_path):
    """`kg export graph --format dot` wrote a file Graphviz refuses ("longer than 16384?") when an entry held more
    than 16 KB of text without a newline: labels were cut, attributes (error_text, details) were not."""
    minified = "SyntaxError in bundle.min.js: " + "a=b+c;" * 4000
    wide = "é\"\\" * 3000  # escapes and two-byte characters: the limit is Graphviz's bytes, not characters
    lines = tmp_path / "in.jsonl"
    lines.write_text(json.dumps({"kind": "error", "summary": "webpack failed on minified bundle",
                                 "error": minified, "details": wide}) + "\n", encoding="utf-8")
    assert run_kg(f"ingest {lines}").exit_code == 0
    done = run_kg("export graph --format dot --out g.dot")
    assert done.exit_code == 0, done.stderr
    text = (ws.root / "g.dot").read_text(encoding="utf-8")
    strings = re.findall(r'"((?:[^"\\]|\\.)*)"', text)
    assert max(len(s.encode("utf-8")) + 2 for s in strings) <= 16_384
    error_text = next(s for s in strings if s.startswith("SyntaxError in bundle.min.js"))
    assert error_text.endswith(f" …[cut: {len(minified):,} characters in all]")
    details = next(s for s in strings if s.startswith('é\\"'))
    assert details.endswith(f" …[cut: {len(wide):,} characters in all]")
    head = details.split(" …[cut")[0]  # cut between characters, never inside an escape
    assert wide.startswith(re.sub(r"\\(.)", r"\1", head)) and len(head) > 10_000
    if shutil.which("dot") is not None:
        drawn = subprocess.run(["dot", "-Tplain", str(ws.root / "g.dot")], capture_output=True, text=True,
                               timeout=120, check=False)
        assert drawn.returncode == 0, drawn.stderr


def test_a_failed_command_holding_backticks_stays_one_code_span(ws, run_kg):
    """`pytest -q; rm -rf $HOME/`id`` wrapped in single backticks ended the span at its own first backtick, in the
    entry's summary and the daily log: the fence is now longer than any run of backticks inside."""
    payload = {"session_id": "s", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_use_id": "t1",
               "tool_input": {"command": "pytest -q; rm -rf $HOME/`id`"},
               "error": "Exit code 2\nE   ModuleNotFoundError: No module named foo"}
    done = run_kg("hook post-tool-use --runtime claude-code --json", input=json.dumps(payload),
                  env={"KG_HOOK_WAIT": "1"})
    assert done.exit_code == 0, done.stderr
    said = "`` pytest -q; rm -rf $HOME/`id` `` failed: E ModuleNotFoundError: No module named foo"
    assert done.json["summary"] == said
    day = "\n".join(p.read_text(encoding="utf-8") for p in (ws.root / "memory").glob("*.md"))
    assert said in day


@pytest.mark.baseline_wait_off("a promotion on the workspace's first days")
def test_a_promoted_rule_keeps_its_code_fences_whole(ws, run_kg):
    """rules/lifecycle.toml's `generalise` dropped every `` (meant for the code spans its removals leave empty):
    an action ending in ``` was written with one stray backtick, inline code in double backticks lost its fence."""
    action = "Quote the command as `` rm $HOME/`id` ``, not `toolu_0123456789ab`, and end the block with ```"
    for s in (1, 2):
        assert run_kg(f"session start --now 2026-11-2{s}T09:00:00").exit_code == 0
        for i in (1, 2):
            r = run_kg(["log", "learning", "User: quote shell commands whole", "--category", "correction",
                        "--area", "docs", "--pattern-key", "docs.quote_shell", "--action", action,
                        "--now", f"2026-11-2{s}T09:2{i}:00"])
            assert r.exit_code == 0, r.stderr
        assert run_kg(f"session end --summary x --now 2026-11-2{s}T17:00:00").exit_code == 0
    assert run_kg("cycle --now 2026-11-23T06:15:00").exit_code == 0
    (p,) = [p for p in run_kg(["propose", "--json"]).json if p["type"] == "promotion"]
    # the tool call's id goes (an instance detail) and the span it leaves empty with it; the fences stay whole
    kept = "Quote the command as `` rm $HOME/`id` ``, not, and end the block with ```"
    assert kept in p["text"], p["text"]
    r = run_kg(["approve", str(p["number"]), "--json", "--now", "2026-11-23T07:00:00"])
    assert r.exit_code == 0, r.stderr
    assert kept in (ws.root / p["target"]).read_text(encoding="utf-8")


@pytest.mark.parametrize("hidden", ["\u200b", "\u200d", "\u2060", "\u202e", "\u2066", "\u2069", "\u061c",
                                    "\u2063", "\u00ad", "\u034f", "\ufe0f", "\U000e0020", "\u180b", "\u115f"])
def test_a_secret_with_an_invisible_character_inside_is_still_redacted(ws, run_kg, hidden):
    """Redaction read the raw text and `clean` dropped a zero-width space after it: `ghp_…\\u200b…` in --details
    was stored as the whole token, unredacted (in the summary it was split in two, half of it kept)."""
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    hid = token[:10] + hidden + token[10:]
    done = run_kg(["log", "learning", f"the token {hid} leaked", "--details", f"it was {hid}", "--wait", "--json"])
    assert done.exit_code == 0, done.stderr
    node = run_kg(f"show {done.json['id']} --json").json["node"]
    assert node["text"] == "the token [REDACTED:github_token] leaked"
    assert node["details"] == "it was [REDACTED:github_token]"


def test_text_with_no_secret_keeps_the_characters_of_its_script(ws, run_kg):
    """Redaction reads a text without the characters that show nothing, and stored that reading for every text:
    an Arabic letter mark, an emoji's variation selector were dropped from text that held no secret."""
    text = "\u0645\u0631\u062d\u0628\u0627\u061c \u0628\u0627\u0644\u0639\u0627\u0644\u0645 \U0001f44d\ufe0f"
    done = run_kg(["log", "learning", text, "--wait", "--json"])
    assert done.exit_code == 0, done.stderr
    assert run_kg(f"show {done.json['id']} --json").json["node"]["text"] == text
