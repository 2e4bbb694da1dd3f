"""Lines behind what tools print before them (a diff's + - and space, grep -n's `path:12:`, rg's `12:`, Claude Code's
Read `     12→`, cat -n's `     12<tab>`, a quote's `> `) lose the secrets the bare lines lose (QA qa1: `+mimi=<key>`,
`file.py:3:SUPER_SEECRET_VALUE = '<key>'`, an INI value continued on indented lines, and a key block read with line
numbers, of which only the BEGIN line went, were stored). The secrets are detect-secrets' planted test values
(Yelp/detect-secrets test_data, Apache-2.0, as in tests/data/secrets). Ordinary lines behind the same prefixes, git
SHAs among them, come out as they went in."""

from __future__ import annotations

import dataclasses

import pytest

from kg.redaction.redact import Redactor, SecretRulesError, load_default

ENV = "mimi=gX69YO4CvBsVjzAwYxdGyDd30t5+9ez31gKATtj4"
PY = "SUPER_SEECRET_VALUE = 'c3VwZXIgbG9uZyBzdHJpbmcgc2hvdWxkIGNhdXNlIGVub3VnaCBlbnRyb3B5'"
INI = "real_secret_which_isnt_an_i_d = vh987tyw9ehy8ghis7vwyhiwbwitefy7w3ASDGYDGUASDG"
LIST = "secrets_for_no_one_to_find =\n    hunter2\n    password123\n    BEEF0123456789a"
KEY = ("-----BEGIN OPENSSH PRIVATE KEY-----\nsomethingSuperRandomAndSecretHereThatShouldNeverBeShared\n"
       "-----END OPENSSH PRIVATE KEY-----")
SECRETS = {ENV: ["gX69YO4CvBsVjzAwYxdGyDd30t5"], PY: ["c3VwZXIgbG9uZyBzdHJpbmcgc2hvdWxk"],
           INI: ["vh987tyw9ehy8ghis7vwyhiwbwitefy7w3"], LIST: ["hunter2", "password123", "BEEF0123456789a"],
           KEY: ["somethingSuperRandom", "END OPENSSH"]}

PREFIXES = {
    "diff +": lambda n: "+",
    "diff -": lambda n: "-",
    "diff hunk": lambda n: " " if n > 1 else "+",  # context lines beside a changed one
    "grep -n": lambda n: f"config/settings.py:{n}:",
    "grep context": lambda n: f"config/my-settings.py-{n}-",
    "rg one file": lambda n: f"{n}:",
    "Read": lambda n: f"{n:>6}\u2192",
    "cat -n": lambda n: f"{n:>6}\t",
    "quoted": lambda n: "> ",
    "Read of a diff": lambda n: f"{n:>6}\u2192+",
    "Windows grep": lambda n: f"C:\\src\\app.py:{n}:",
}


def prefixed(text: str, prefix) -> str:
    return "\n".join(prefix(n) + line for n, line in enumerate(text.split("\n"), 1))


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("name", PREFIXES)
@pytest.mark.parametrize("bare", SECRETS, ids=["env", "py", "ini", "ini-list", "key-block"])
def test_a_prefixed_line_loses_what_the_bare_line_loses(bare, name):
    assert all(s not in redact(bare) for s in SECRETS[bare])  # the bare lines lose them today
    text = prefixed(bare, PREFIXES[name])
    out = redact(text)
    assert [s for s in SECRETS[bare] if s in out] == []
    assert out.startswith(PREFIXES[name](1))  # what the tool printed stays
    assert redact(out) == out


@pytest.mark.parametrize("name", ["Read", "diff +", "grep -n", "cat -n", "Read of a diff"])
def test_a_key_block_with_its_lines_prefixed_goes_whole(name):
    text = "ran: cat ~/.ssh/id_ed25519\n" + prefixed(KEY, PREFIXES[name]) + "\ndone"
    found = load_default().redact(text)
    assert found.text == f"ran: cat ~/.ssh/id_ed25519\n{PREFIXES[name](1)}[REDACTED:private_key]\ndone"
    assert found.kinds == ("private_key",)


def test_an_ini_list_in_a_diff_keeps_its_marks_and_key():
    out = redact("diff --git a/deploy.ini b/deploy.ini\n@@ -1,2 +1,4 @@\n" + prefixed(LIST, PREFIXES["diff +"]))
    assert out.endswith("\n+secrets_for_no_one_to_find =\n+[REDACTED:secret_list]")


ORDINARY = [
    "commit 3f4e2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f\nAuthor: Ada <ada@example.com>\n\n    fix the parser",
    "sha = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'\n"
    "rev = 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "def load(path):\n    with open(path) as handle:\n        return json.load(handle)\n",
    "token = get_token(user)\npassword = None\nsecret_key = settings.SECRET_KEY",
    "key = 'config.database.primary.host'\nname = \"ordinary_identifier_name_here\"",
    "- install the package\n- run `pytest -q`\n- 12:30 meeting about the token budget",
    "2026-07-01T10:00:00 INFO starting\n2026-07-01T10:00:01 WARN slow request id=42",
    # a bun.lock's sha512 digest as a terminal wrapped it (a real Cursor chat): `2-` is no context line's number
    '"@types/node": ["@types/node@22.15.2", "", {}, "sha51\n'
    '2-uKXqKN9beGoMdBfcaTY1ecwz6ctxuJAcUlwE55938g0ZJ8lRxwAZqRz2AJ4pzpt5dHdTPMB863UZ0ESiFUcP7A=="],',
]


@pytest.mark.parametrize("name", PREFIXES)
@pytest.mark.parametrize("bare", ORDINARY)
def test_ordinary_prefixed_lines_stay(bare, name):
    """Near misses: git SHAs, code, a Markdown list, a log behind each prefix come out unchanged (guards: these held
    before the view existed and must hold with it)."""
    assert redact(bare) == bare
    text = prefixed(bare, PREFIXES[name])
    assert redact(text) == text


def test_a_secret_found_behind_a_prefix_is_redacted_where_else_it_occurs():
    text = "+" + ENV + "\nrotated gX69YO4CvBsVjzAwYxdGyDd30t5+9ez31gKATtj4 (mimi)"
    assert "gX69YO4" not in redact(text)


def test_without_line_prefixes_the_rules_read_only_the_text():
    """The view is the packaged rules' `line_prefix`: a rule set without one reads lines as they are (as before)."""
    plain = dataclasses.replace(load_default(), line_prefix="")
    assert plain.redact("+" + ENV).text == "+" + ENV
    assert load_default().redact("+" + ENV).text == "+mimi=[REDACTED:high_entropy_secret]"


@pytest.mark.parametrize("value, message", [
    ("(", "bad regex in 'line_prefix'"),
    (["+"], "'line_prefix' must be a regex"),
    ("\\s", "must not match a line's end"),
])
def test_a_bad_line_prefix_is_refused_with_its_reason(value, message):
    with pytest.raises(SecretRulesError, match=message):
        Redactor.from_mapping({"line_prefix": value, "rule": []})


# The reviewer's second round (all three kept the key): grep -n -C of one file prints a context line `12-` with no
# blank after it; `git diff --color` puts an escape before the `+`; a merge's combined diff has two marks (`++`).
COLOURED = {"coloured diff +": lambda n: "\x1b[32m+", "coloured, reset after the mark": lambda n: "\x1b[32m+\x1b[m",
            "combined diff": lambda n: "++", "combined diff +-": lambda n: "+-", "combined context": lambda n: " +"}


@pytest.mark.parametrize("name", COLOURED)
@pytest.mark.parametrize("bare", SECRETS, ids=["env", "py", "ini", "ini-list", "key-block"])
def test_a_coloured_or_combined_diff_line_loses_what_the_bare_line_loses(bare, name):
    out = redact(prefixed(bare, COLOURED[name]))
    assert [s for s in SECRETS[bare] if s in out] == []
    assert out.startswith(COLOURED[name](1)) and redact(out) == out


@pytest.mark.parametrize("match_first", [True, False], ids=["after the match", "before the match"])
@pytest.mark.parametrize("bare", SECRETS, ids=["env", "py", "ini", "ini-list", "key-block"])
def test_grep_context_lines_of_one_file_lose_what_the_bare_line_loses(bare, match_first):
    lines = bare.split("\n")
    if match_first:
        text = "7:DEBUG=1\n" + "\n".join(f"{n}-{line}" for n, line in enumerate(lines, 8))
    else:
        text = "\n".join(f"{n}-{line}" for n, line in enumerate(lines, 7)) + f"\n{7 + len(lines)}:DEBUG=1"
    out = redact(text)
    assert [s for s in SECRETS[bare] if s in out] == []
    assert redact(out) == out


def test_a_secret_split_by_a_colour_is_redacted_whole():
    out = redact("mimi=\x1b[1mgX69YO4CvBsVjzAwYxdGyDd30t5+9ez31gKATtj4\x1b[0m done")
    assert out == "mimi=\x1b[1m[REDACTED:high_entropy_secret]\x1b[0m done"


@pytest.mark.parametrize("text", [
    # numbered lines that are no grep block: not one after another, or no match line among them
    "2-uKXqKN9beGoMdBfcaTY1ecwz6ctxuJAcUlwE55938g0ZJ8lRxwAZqRz2AJ4pzpt5dHdTPMB863UZ0ESiFUcP7A==\n"
    "5:DEBUG=1",
    "2-uKXqKN9beGoMdBfcaTY1ecwz6ctxuJAcUlwE55938g0ZJ8lRxwAZqRz2AJ4pzpt5dHdTPMB863UZ0ESiFUcP7A==\n"
    "3-uKXqKN9beGoMdBfcaTY1ecwz6ctxuJAcUlwE55938g0ZJ8lRxwAZqRz2AJ4pzpt5dHdTPMB863UZ0ESiFUcP7A==",
    "\x1b[32m+ install the package\x1b[m\n\x1b[31m- run `pytest -q`\x1b[m\n"
    "\x1b[1mcommit 3f4e2a1b9c8d7e6f5a4b3c2d\x1b[m",
    "++ b/src/app.py\n-- a/src/app.py\n--verbose  print more\n++counter;",
])
def test_near_misses_of_the_new_prefixes_stay(text):
    assert redact(text) == text


@pytest.mark.parametrize("bare", SECRETS, ids=["env", "py", "ini", "ini-list", "key-block"])
def test_coloured_lines_amid_a_long_text_are_read_alone(bare):
    """The view without escapes holds the coloured lines and the line on either side, not the whole text: a 10 MB
    transcript with a few coloured lines was read twice whole (3.6 s against 1.7 s). What it finds there still goes,
    in a run anywhere in the text, and a span found in one run is not stretched over the text between two runs."""
    from kg.redaction.prefixes import unescaped

    filler = "".join(f"plain line {n} of ordinary output\n" for n in range(2000))
    coloured = prefixed(bare, COLOURED["coloured diff +"])
    text = filler + coloured + "\n" + filler + "\x1b[1mdone\x1b[0m\n" + filler
    view = unescaped(text)
    assert view is not None and len(view.text) < len(coloured) + 200
    assert view.text.startswith("plain line 1999 of ordinary output\n")
    out = redact(text)
    assert [s for s in SECRETS[bare] if s in out] == []
    assert out.count("plain line") == 6000 and redact(out) == out
    for start in range(0, len(view.text)):  # every view position maps to its own character of the text
        lo, _ = view.span(start, start + 1)
        assert text[lo] == view.text[start]
