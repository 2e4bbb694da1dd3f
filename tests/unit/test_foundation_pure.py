"""Pure parts of the foundation: validation, time, tokenising, query parameter checks, rule merging."""

from __future__ import annotations

from datetime import datetime

import pytest

from kg.core import clock
from kg.core.entries import prepare
from kg.core.errors import QueryParameterError, RulesError, UsageError
from kg.core.policy import Policy, merge, packaged
from kg.core.text import clean, index_tokens, slugify, words
from kg.redaction.redact import load_default
from kg.store.queries import NamedQuery, params_of, parse

NOW = datetime(2026, 11, 30, 10, 35)
POLICY = Policy.from_mapping(packaged("policy"))
REDACTOR = load_default()


def _prep(kind="error", summary="git push failed", **fields):
    return prepare(POLICY, REDACTOR, kind, summary, now=NOW, **fields)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "bogus"}, "unknown entry kind 'bogus': use one of learning, error, feature"),
        ({"summary": ""}, "the summary is empty: say in one line what happened"),
        ({"summary": " \x00\x1b "}, "the summary is empty: say in one line what happened"),
        ({"priority": "urgent"}, "unknown priority 'urgent': use one of critical, high, medium, low"),
        ({"source": "dream"}, "unknown source 'dream'"),
        ({"reproducible": "maybe"}, "unknown reproducible 'maybe': use one of yes, no, unknown"),
        ({"status": "done"}, "unknown status 'done'"),
        ({"summary": "x" * 1_048_576}, "the summary is 1,048,576 characters; the limit is 2,000"),
        ({"details": "y" * 1_048_576}, "--details is 1,048,576 characters; the limit is 200,000"),
    ],
)
def test_bad_entries_say_what_to_fix(kwargs, message):
    with pytest.raises(UsageError) as info:
        _prep(**kwargs)
    assert message in str(info.value)


def test_defaults_follow_the_rules():
    f = _prep().fields
    assert (f["priority"], f["source"], f["category"], f["status"]) == ("high", "error", "error", "pending")
    f = _prep("feature", "export to csv").fields
    assert (f["priority"], f["source"], f["category"]) == ("medium", "user_feedback", "feature_request")


def test_control_characters_are_dropped_and_summary_is_one_line():
    f = _prep(summary="bad\x00 \x1b[31mred\x07\nnext line", details="keep\nnewlines\tand tabs\x00").fields
    assert f["text"] == "bad [31mred next line"
    assert f["details"] == "keep\nnewlines\tand tabs"


def test_cypher_looking_text_is_kept_verbatim():
    text = "'}) MATCH (n) DETACH DELETE n //"
    assert _prep(summary=text).fields["text"] == text


def test_secrets_are_redacted_in_every_field_and_kinds_reported():
    p = _prep(summary="push with ghp_abcdefghijklmnopqrstuvwxyz0123456789 failed",
              details="password=hunter2hunter2", tags=["sk-ant-api03-" + "a" * 40])
    assert "ghp_" not in p.fields["text"] and "hunter2" not in p.fields["details"]
    assert "sk-ant" not in " ".join(p.fields["tags"])
    assert "github_token" in p.redactions and "password_assignment" in p.redactions
    assert all("hunter2" not in k for k in p.redactions)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Git push FAILED", ["git", "push", "failed"]),
        ("用户喜欢", ["用户", "户喜", "喜欢"]),
        ("用 git 推送", ["用", "git", "推送"]),
        ("auth-error: café", ["auth", "error", "café"]),
    ],
)
def test_words_split_latin_and_cjk(text, expected):
    assert words(text) == expected


def test_index_tokens_joins_all_parts():
    assert index_tokens("a b", None, "不要") == "a b 不要"


def test_clean_one_line():
    assert clean("  a\n\tb\x00 ", one_line=True) == "a b"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-30", datetime(2026, 11, 30)),
        ("2026-11-30T10:35", datetime(2026, 11, 30, 10, 35)),
        ("2026-11-30 10:35:07.5", datetime(2026, 11, 30, 10, 35, 7)),
    ],
)
def test_parse_time(value, expected):
    assert clock.parse_time(value) == expected


def test_bad_now_is_a_usage_error():
    with pytest.raises(UsageError, match="invalid --now 'yesterday'"):
        clock.now("yesterday")


def test_now_comes_from_env(monkeypatch):
    monkeypatch.setenv("KG_NOW", "2026-01-02T03:04:05")
    assert clock.now() == datetime(2026, 1, 2, 3, 4, 5)


@pytest.mark.parametrize(("span", "expected"), [("7d", datetime(2026, 11, 23, 10, 35)),
                                                ("12h", datetime(2026, 11, 29, 22, 35)),
                                                ("2026-11-01", datetime(2026, 11, 1))])
def test_since(span, expected):
    assert clock.parse_since(span, NOW) == expected


def test_a_refused_since_names_the_spans_it_takes():
    # "use ISO 8601" alone sent an agent that typed --since yesterday away from 1d, which --since takes
    with pytest.raises(UsageError, match=r"invalid --since 'yesterday': use a span such as 7d, 12h, 2w or 30m, or an"):
        clock.parse_since("yesterday", NOW)


def test_query_params_ignore_string_literals():
    assert params_of("MATCH (n {id: $id}) WHERE n.text = '$notaparam' RETURN n") == {"id"}


@pytest.mark.parametrize(
    ("given", "message"),
    [({}, "missing $id"), ({"id": 1, "extra": 2}, "unknown extra"), ({"other": 1}, "missing $id; unknown other")],
)
def test_unbound_or_unknown_parameters_are_refused(given, message):
    query = NamedQuery("q", "MATCH (n {id: $id}) DETACH DELETE n", frozenset({"id"}))
    with pytest.raises(QueryParameterError, match=message.replace("$", r"\$")):
        query.check(given)


def test_query_file_parsing():
    found = parse("// name: a\n// doc line\nMATCH (n) RETURN n\n\n// name: b\nRETURN $x\n", "t.cypher")
    assert found["a"].doc == "doc line" and found["a"].text == "MATCH (n) RETURN n"
    assert found["b"].params == {"x"}
    with pytest.raises(RulesError, match="defined twice"):
        parse("// name: a\nRETURN 1\n// name: a\nRETURN 2\n", "t.cypher")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"limits": {"summary_max_char": 5}},
         "limits.summary_max_char: unknown key (known keys here: field_max_chars, list_max_items, summary_max_chars)"),
        ({"limits": {"summary_max_chars": "5"}}, "limits.summary_max_chars: must be a number, not a string"),
        ({"lock": 3}, "lock: must be a table, not 3"),
    ],
)
def test_rule_overrides_are_validated(override, message):
    with pytest.raises(RulesError) as err:
        merge(packaged("policy"), override, "kg.toml")
    assert str(err.value) == f"kg.toml: {message}"


def test_rule_override_applies():
    merged = merge(packaged("policy"), {"limits": {"summary_max_chars": 50}}, "kg.toml")
    assert Policy.from_mapping(merged).summary_max_chars == 50


# -- the console entry builds only the invoked subcommand ------------------------------------------------------
@pytest.mark.parametrize(("argv", "expected"), [
    (["log", "error", "x"], "log"),
    (["-w", "/tmp/ws", "--now", "2026-01-01", "hook", "session-start"], "hook"),
    (["--workspace=/tmp/ws", "status"], "status"),
    (["--rules", "r", "--", "list"], "list"),
    (["--help"], None),
    ([], None),
    (["-w"], None),
])
def test_the_subcommand_is_read_past_the_global_options(argv, expected):
    from kg.cli.app import _invoked

    assert _invoked(argv) == expected


def test_narrowing_the_app_keeps_unknown_names_whole():
    from kg.cli.app import _only, app

    before = (list(app.registered_commands), list(app.registered_groups))
    with _only("log"):
        assert [c.callback.__name__ for c in app.registered_commands] == ["log"] and not app.registered_groups
    with _only("export"):
        assert not app.registered_commands and len(app.registered_groups) == 1
    with _only("lgo"):  # a typo: the whole app, so click can suggest 'log'
        assert (app.registered_commands, app.registered_groups) == before
    assert (app.registered_commands, app.registered_groups) == before


@pytest.mark.parametrize(("text", "options", "slug"), [
    ("git.push.auth", {}, "git-push-auth"),
    ("部署.回滚", {}, "部署-回滚"),
    ("x" * 70, {}, "x" * 60),
    ("...", {"fallback": "skill"}, "skill"),
    # a failure key's tool segment (kg.reflect.signature.slug): snake_case, ASCII, uncapped
    ("mcp__plugin_x__do-thing", {"sep": "_", "cjk": False, "limit": None}, "mcp_plugin_x_do_thing"),
    ("工具", {"sep": "_", "cjk": False, "limit": None, "fallback": "tool"}, "tool"),
    ("y" * 70, {"sep": "_", "cjk": False, "limit": None}, "y" * 70),
    # a derived pattern key's area (kg.graph.decisions.derived_key)
    ("Front End/CI", {"cjk": False, "limit": None}, "front-end-ci"),
])
def test_the_one_slugify(text, options, slug):
    assert slugify(text, **options) == slug


def test_one_slugifier_and_one_cjk_range():
    """No module outside kg/core/text.py spells a slug pattern or a CJK range of its own: a second one drifts
    (the issue found two slugifiers and three CJK ranges that disagreed)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    own = re.compile(r"\[\^a-z0-9\]|\\u4e00|\\u3040|\\uac00|一-龥")
    found = [f"{p.relative_to(root)}:{n}" for folder in ("kg", "cli") for p in sorted((root / folder).rglob("*.py"))
             if p != root / "kg/core/text.py"
             for n, line in enumerate(p.read_text().splitlines(), 1) if own.search(line)]
    assert found == []
