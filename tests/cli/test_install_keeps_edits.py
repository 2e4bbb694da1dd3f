"""`kg install` run again keeps what a person edited of kg's own hook entries (a timeout, a matcher, an env var put
before kg's command), with a note saying so and that `--force` puts kg's back; it brings unedited kg entries to the
current ones and never touches the person's own entries. Uninstall keeps an edited entry too, as it keeps an edited
OpenClaw handler.js. The real CLI on real files."""

from __future__ import annotations

import json

import pytest

SETTINGS = {"claude-code": ".claude/settings.local.json", "codex": ".codex/hooks.json"}
FIRST = {"claude-code": "SessionStart", "codex": "SessionStart"}
SECOND = {"claude-code": "SessionEnd", "codex": "Stop"}
MINE = {"type": "command", "command": "./scripts/my-own-hook.sh"}


def _load(ws, runtime: str) -> dict:
    return json.loads((ws.root / SETTINGS[runtime]).read_text(encoding="utf-8"))


def _save(ws, runtime: str, data: dict) -> None:
    (ws.root / SETTINGS[runtime]).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _kg(data: dict, event: str) -> tuple[dict, dict]:
    """(group, handler) of kg's hook for `event`."""
    return next((g, h) for g in data["hooks"][event] for h in g["hooks"] if "--runtime" in h["command"])


def _edit(ws, runtime: str) -> dict:
    """A person's edits: kg's first hook gets a longer timeout and a narrower matcher, its second an env var before
    kg's command; their own hook goes beside kg's."""
    data = _load(ws, runtime)
    group, hook = _kg(data, FIRST[runtime])
    group["matcher"], hook["timeout"] = "startup", 90
    _, hook = _kg(data, SECOND[runtime])
    hook["command"] = "KG_HOOK_WAIT=1 " + hook["command"]
    data["hooks"][FIRST[runtime]].append({"matcher": "startup", "hooks": [MINE]})
    _save(ws, runtime, data)
    return data


@pytest.mark.parametrize("runtime", ["claude-code", "codex"])
def test_install_again_keeps_a_person_s_edits_of_kg_s_hooks(ws, run_kg, runtime):
    assert run_kg(f"install {runtime}").exit_code == 0
    edited = _edit(ws, runtime)
    dry = run_kg(f"install {runtime} --dry-run")
    assert dry.exit_code == 0 and _load(ws, runtime) == edited
    res = run_kg(f"install {runtime}")
    assert res.exit_code == 0
    assert _load(ws, runtime) == edited  # every edit kept, the person's own hook untouched
    where = SETTINGS[runtime]
    assert (f"{where}: kg's {FIRST[runtime]} hook was edited since kg wrote it (matcher, timeout): kept; "
            f"`kg install {runtime} --force` puts kg's back (your edit is lost)\n") in res.stderr
    assert f"kg's {SECOND[runtime]} hook was edited since kg wrote it (command): kept" in res.stderr
    assert run_kg(f"install {runtime}").stdout == f"{runtime}: nothing to change in {ws.root}\n"  # idempotent

    forced = run_kg(f"install {runtime} --force")
    assert forced.exit_code == 0 and "edited since kg wrote it" not in forced.stderr
    data = _load(ws, runtime)
    group, hook = _kg(data, FIRST[runtime])
    assert group["matcher"] == "startup|resume|clear|compact" and hook["timeout"] == 30
    assert not _kg(data, SECOND[runtime])[1]["command"].startswith("KG_HOOK_WAIT=1 ")
    assert {"matcher": "startup", "hooks": [MINE]} in data["hooks"][FIRST[runtime]]


def test_an_unedited_kg_hook_is_brought_to_the_current_one(ws, run_kg):
    """What an older kg wrote (here: another timeout) is updated, not kept: as the record of an install before kg
    kept its hook entries says it (the file as kg left it), and as kg's own entries in the record say it."""
    run_kg("install claude-code")
    path = ws.root / SETTINGS["claude-code"]
    record = ws.root / "memory" / ".kg" / "installs.json"
    for older in ("after", "hooks"):
        data = _load(ws, "claude-code")
        _kg(data, "SessionEnd")[1]["timeout"] = 45
        _save(ws, "claude-code", data)
        installs = json.loads(record.read_text(encoding="utf-8"))
        entry = installs["claude-code"][str(path)]
        if older == "after":
            del entry["hooks"]
            entry["after"] = path.read_text(encoding="utf-8")
        else:
            _kg({"hooks": entry["hooks"]}, "SessionEnd")[1]["timeout"] = 45
        record.write_text(json.dumps(installs), encoding="utf-8")
        res = run_kg("install claude-code")
        assert res.exit_code == 0 and "edited" not in res.stderr, older
        assert _kg(_load(ws, "claude-code"), "SessionEnd")[1]["timeout"] == 120, older


@pytest.mark.parametrize("runtime", ["claude-code", "codex"])
def test_uninstall_after_an_edit_keeps_the_edited_hook_and_force_takes_it_out(ws, run_kg, runtime):
    run_kg(f"install {runtime}")
    _edit(ws, runtime)
    res = run_kg(f"uninstall {runtime}")
    assert res.exit_code == 0
    assert (f"kg's {FIRST[runtime]} hook was edited since kg wrote it (matcher, timeout): kept; remove it by hand, "
            f"or run `kg uninstall {runtime} --force`") in res.stderr
    data = _load(ws, runtime)
    left = [h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
    assert len([c for c in left if "--runtime" in c]) == 2 and MINE["command"] in left  # the two edited, and mine
    again = run_kg(f"install {runtime}")  # kg still knows what it wrote: the edits stay
    assert again.exit_code == 0 and "was edited since kg wrote it" in again.stderr
    assert _kg(_load(ws, runtime), FIRST[runtime])[1]["timeout"] == 90
    gone = run_kg(f"uninstall {runtime} --force")
    assert gone.exit_code == 0
    assert [h["command"] for groups in _load(ws, runtime)["hooks"].values() for g in groups
            for h in g["hooks"]] == [MINE["command"]]


def test_openclaw_force_puts_kg_s_handler_back(ws, run_kg):
    """The same question for OpenClaw's hook folder: an edited handler.js is kept, and --force is the way back."""
    run_kg("install openclaw")
    handler = ws.root / "hooks" / "kaizen-kg" / "handler.js"
    ours = handler.read_text(encoding="utf-8")
    handler.write_text(ours + "// my local tweak\n", encoding="utf-8")
    res = run_kg("install openclaw")
    assert ("hooks/kaizen-kg/handler.js was edited since kg wrote it: kept; `kg install openclaw --force` puts "
            "kg's back (your edit is lost)") in res.stderr
    assert run_kg("install openclaw --force").exit_code == 0 and handler.read_text(encoding="utf-8") == ours
    handler.write_text(ours + "// my local tweak\n", encoding="utf-8")
    kept = run_kg("uninstall openclaw")
    assert "or run `kg uninstall openclaw --force`" in kept.stderr and handler.exists()
    assert run_kg("uninstall openclaw --force").exit_code == 0 and not (ws.root / "hooks").exists()


def test_codex_force_rewrites_an_edited_agents_block(ws, run_kg):
    """Codex's marked blocks answered the question already (flagged and kept); --force is their way back too."""
    run_kg("install codex")
    agents = ws.root / "AGENTS.md"
    ours = agents.read_text(encoding="utf-8")
    agents.write_text(ours.replace("Please:", "Please, always:"), encoding="utf-8")
    res = run_kg("install codex")
    assert ("AGENTS.md: kg's block was left as it is: a human edited inside the kg block; move the text outside the "
            "markers, or run `kg install codex --force`") in res.stderr
    assert "Please, always:" in agents.read_text(encoding="utf-8")
    assert run_kg("install codex --force").exit_code == 0 and agents.read_text(encoding="utf-8") == ours
