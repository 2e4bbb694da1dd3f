"""Pure parts of the hooks and integrations: fitting the brief, reading tool failures, merging settings."""

from __future__ import annotations

import json
import tomllib

import pytest

from kg.core.errors import RulesError, UsageError
from kg.lifecycle import blocks
from kg.runtimes import codex_toml
from kg.runtimes.hook_settings import edited_hooks, merge_hooks, strip_hooks
from kg.runtimes.hooks import HookRules, Section, fit, tool_failure
from kg.runtimes.integrations import LEGACY_BEGIN, LEGACY_END, agents_plan


def _sec(name: str, n: int, total: int | None = None) -> Section:
    return Section(name, name.title(), lines=[f"- item {i} of {name}" for i in range(n)], total=total or n,
                   more=f"kg more {name}")


@pytest.mark.parametrize("budget", [40, 60, 80, 120, 200, 400, 1000])
def test_fit_never_exceeds_the_budget(budget):
    text, shown, omitted = fit("# head", [_sec("a", 5), _sec("b", 3, total=9)], budget)
    assert len(text) <= budget
    assert {s["name"] for s in shown} | set(omitted) <= {"a", "b"}


def test_fit_cuts_a_section_with_a_more_line():
    text, shown, omitted = fit("# head", [_sec("a", 5)], 75)
    assert text.startswith("# head\n\n## A (5)\n- item 0 of a")
    assert "- … " in text and "`kg more a`" in text
    assert shown[0]["shown"] < 5 and omitted == []


def test_fit_keeps_order_and_skips_empty_sections():
    text, shown, _ = fit("# h", [_sec("b", 1), Section("empty", "Empty"), _sec("a", 1)], 1000)
    assert [s["name"] for s in shown] == ["b", "a"]
    assert text.index("## B") < text.index("## A") and "Empty" not in text


def test_fit_late_section_gets_the_free_characters():
    seen = []

    def render(free: int) -> str:
        seen.append(free)
        return "M" * min(free, 100)

    text, shown, _ = fit("# h", [Section("memory", render=render), _sec("a", 1)], 300)
    assert seen == [300 - 3 - 2] and "M" * 100 in text and shown[0] == {"name": "memory", "chars": 100}


def test_fit_is_deterministic():
    secs = [_sec("a", 7, 20), _sec("b", 4)]
    assert fit("# h", secs, 150) == fit("# h", secs, 150)


@pytest.mark.parametrize("payload,expected", [
    ({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": "git push"},
      "error": "fatal: no upstream"}, ("Bash", "fatal: no upstream", "git push")),
    ({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "error": "x", "is_interrupt": True}, None),
    ({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"},
      "tool_response": {"stdout": "a", "stderr": "", "interrupted": False}}, None),
    ({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "make"},
      "tool_response": {"stdout": "", "stderr": "boom", "exit_code": 2}}, ("Bash", "boom", "make")),
    ({"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": "a.py"},
      "tool_response": {"success": False, "error": "old_string not found"}},
     ("Edit", "old_string not found", "a.py")),
    ({"hook_event_name": "PostToolUse", "tool_name": "mcp__x", "tool_response": {"isError": True,
      "content": [{"type": "text", "text": "denied"}]}}, ("mcp__x", "denied", "")),
    ({"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_response": "file text"}, None),
    ({}, None),
])
def test_tool_failure(payload, expected):
    got = tool_failure(payload)
    assert (None if got is None else (got.tool, got.error, got.command)) == expected


def test_failure_summary_names_the_command():
    f = tool_failure({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                      "tool_input": {"command": "pytest -q"}, "error": "\n\nE   ImportError: x\nmore"})
    from kg.core.policy import packaged
    from kg.reflect.failures import failure_of_payload, load_rules

    got = failure_of_payload(f.tool, f.error, f.command, load_rules(packaged("errors")))
    assert got.summary(120) == "`pytest -q` failed: E ImportError: x"


def test_hook_rules_validation():
    ok = HookRules.from_mapping({"budget": 500, "order": ["stats", "memory"]}, ("critical", "high"))
    assert ok.order == ("stats", "memory") and ok.budget == 500
    for bad, word in [({"budget": 10}, "budget"), ({"order": ["nope"]}, "nope"),
                      ({"order": ["stats", "stats"]}, "twice"), ({"high_priorities": ["urgent"]}, "urgent"),
                      ({"limits": {"watch": -1}}, "limits.watch"), ({"session_end": {"reflect": "yes"}}, "reflect")]:
        with pytest.raises(RulesError, match=word):
            HookRules.from_mapping(bad, ("critical", "high"))


MARK = "--runtime claude-code"


def _ours(event: str) -> dict:
    return {"matcher": "x", "hooks": [{"type": "command", "command": f"kg -w /w hook {event} {MARK}"}]}


def test_merge_keeps_other_hooks_and_settings_and_strip_restores_them():
    original = {"model": "opus", "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [
        {"type": "command", "command": "prettier --write"}]}]}, "permissions": {"allow": ["Bash(ls)"]}}
    entries = {"PostToolUse": [_ours("post-tool-use")], "SessionStart": [_ours("session-start")]}
    merged = merge_hooks(original, entries, "claude-code")
    assert merged["model"] == "opus" and merged["permissions"] == original["permissions"]
    assert merged["hooks"]["PostToolUse"][0] == original["hooks"]["PostToolUse"][0]
    assert len(merged["hooks"]["PostToolUse"]) == 2
    assert merge_hooks(merged, entries, "claude-code") == merged  # idempotent
    back, removed = strip_hooks(merged, "claude-code")
    assert removed == 2 and json.dumps(back) == json.dumps(original)


def _kg_group(matcher: str | None = "x", timeout: int = 30, prefix: str = "") -> dict:
    g = _ours("session-start")
    g["hooks"][0]["timeout"] = timeout
    g["hooks"][0]["command"] = prefix + g["hooks"][0]["command"]
    return g if matcher == "x" else {**({"matcher": matcher} if matcher else {}), "hooks": g["hooks"]}


@pytest.mark.parametrize(("now", "wrote", "want", "edited"), [
    (_kg_group(), _kg_group(), _kg_group(timeout=60), {}),                        # as kg wrote it: update it
    (_kg_group(timeout=90), _kg_group(), _kg_group(), {"SessionStart session-start": "timeout"}),
    (_kg_group(matcher=None), _kg_group(), _kg_group(), {"SessionStart session-start": "matcher"}),
    (_kg_group(prefix="A=1 "), _kg_group(), _kg_group(), {"SessionStart session-start": "command"}),
    (_kg_group(timeout=60), _kg_group(), _kg_group(timeout=60), {}),              # already what kg wants now
    (_kg_group(timeout=90), None, _kg_group(), {}),                               # kg does not know what it wrote
])
def test_edited_hooks(now, wrote, want, edited):
    settings = {"hooks": {"SessionStart": [now]}}
    assert edited_hooks(settings, "claude-code", None if wrote is None else {"SessionStart": [wrote]},
                        {"SessionStart": [want]}) == edited


def test_merge_keeps_the_hooks_it_is_told_to_keep_where_they_are():
    mine = {"hooks": [{"type": "command", "command": "echo mine"}]}
    edited = _kg_group(timeout=90)
    settings = {"hooks": {"SessionStart": [edited, mine]}}
    merged = merge_hooks(settings, {"SessionStart": [_kg_group()]}, "claude-code",
                         frozenset({"SessionStart session-start"}))
    assert merged == settings
    assert merge_hooks(settings, {"SessionStart": [_kg_group()]}, "claude-code") == {
        "hooks": {"SessionStart": [mine, _kg_group()]}}


def test_strip_leaves_other_runtimes_and_lookalikes():
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "kg hook session-end --runtime codex"},
                                              {"type": "command", "command": "echo hook session-end"}]}]}}
    assert strip_hooks(settings, "claude-code") == (settings, 0)


def test_agents_block_round_trip_and_human_edits():
    text = "# Agents\n\nBe kind.\n"
    added = agents_plan(text, "body\n", {})
    assert added.action == "insert" and added.text.startswith(text)
    assert "<!-- kaizen-kg:begin install-codex -->\nbody\n<!-- kaizen-kg:end install-codex -->\n" in added.text
    state = {"hash": added.hash, "glue": added.glue}
    assert agents_plan(added.text, "body\n", state).action == "none"
    assert agents_plan(added.text, None, state).text == text
    edited = added.text.replace("body\n", "body\nmine\n")
    flagged = agents_plan(edited, "body\n", state)
    assert flagged.action == "flag" and "a human edited inside the kg block" in flagged.reason
    assert agents_plan(edited, None, state).action == "flag"
    assert agents_plan(text, "body\n", state).action == "insert"  # installing again re-adds a removed block


def test_an_older_installs_markers_become_the_block_format():
    old = f"# Agents\n\n{LEGACY_BEGIN}\nbody\n{LEGACY_END}\n"
    plan = agents_plan(old, "new body\n", {})
    assert plan.action == "update" and LEGACY_BEGIN not in plan.text
    assert blocks.inner_of(plan.text, "install-codex") == "new body\n"


ARGV = ["/bin/kg", "-w", "/w", "mcp"]


def _states(plans):
    return {name: {"hash": p.hash, "glue": p.glue, "created_file": p.action == "create"} for name, p in plans.items()}


@pytest.mark.parametrize("original", [None, "", 'model = "o3"\n', 'model = "o3"\n\n[features]\nweb_search = true\n',
                                      '[features]\ncodex_hooks = false\n',
                                      'a = 1\r\n\r\n[features] # mine\r\nx = 2\r\n'])
def test_codex_toml_blocks_merge_and_come_out_byte_for_byte(original):
    new, plans, notes = codex_toml.sync(original, ARGV, {})
    data = tomllib.loads(new)
    assert data["mcp_servers"]["kaizen-kg"] == {"command": "/bin/kg", "args": ["-w", "/w", "mcp"]}
    assert data["features"].get("hooks", data["features"].get("codex_hooks")) is not None
    off = "codex_hooks = false" in (original or "")  # a person's false: kept, and said (QA1 #3)
    assert notes == [] if not off else ["Codex hooks are turned off" in n for n in notes] == [True]
    assert blocks.names(new, blocks.TOML) == [n for n in codex_toml.NAMES if plans[n].hash]
    again, plans2, _ = codex_toml.sync(new, ARGV, _states(plans))
    assert again == new and {p.action for p in plans2.values()} <= {"none"}  # installing again changes nothing
    gone, _, _ = codex_toml.sync(new, None, _states(plans), install=False)
    assert gone == (original or "") or (original is None and gone is None)


def test_codex_toml_flags_a_human_edit_and_damaged_markers():
    new, plans, _ = codex_toml.sync('[features]\nx = 1\n', ARGV, {})
    assert new.startswith("[features]\n# kaizen-kg:begin codex-hooks\nhooks = true\n# kaizen-kg:end codex-hooks\n"
                          "x = 1\n")
    edited = new.replace("hooks = true\n", "hooks = true\nmine = 2\n")
    kept, flagged, notes = codex_toml.sync(edited, ARGV, _states(plans))
    assert kept == edited and flagged["codex-hooks"].action == "flag"
    assert any("a human edited inside the kg block" in n for n in notes)
    assert codex_toml.sync(edited, None, _states(plans), install=False)[0] == edited.replace(
        new[new.index("# kaizen-kg:begin codex-mcp") - 1:], "")  # uninstall keeps the edited block only
    damaged = new.replace("# kaizen-kg:end codex-mcp\n", "")
    out, plans3, _ = codex_toml.sync(damaged, ARGV, _states(plans))
    assert out == damaged and plans3["codex-mcp"].action == "flag" and "damaged" in plans3["codex-mcp"].reason


def test_codex_toml_an_older_installs_block_becomes_the_new_blocks():
    old = ('model = "o3"\n\n[features]\nhooks = true  # kaizen-kg\nweb = true\n\n'
           f"{codex_toml.LEGACY_BEGIN}\n[mcp_servers.kaizen-kg]\ncommand = \"kg\"\nargs = []\n"
           f"{codex_toml.LEGACY_END}\n")
    new, _, _ = codex_toml.sync(old, ARGV, {})
    assert codex_toml.LEGACY_BEGIN not in new and "# kaizen-kg\n" not in new.replace("# kaizen-kg:", "")
    assert tomllib.loads(new)["features"] == {"hooks": True, "web": True}


def test_codex_toml_refuses_broken_toml():
    with pytest.raises(UsageError, match="not valid TOML"):
        codex_toml.sync("[broken", ["kg", "mcp"], {})
