"""`kg install/uninstall`, the hook commands as the runtimes run them (a shell command with the payload on
stdin; node for OpenClaw's handler.js) and `kg mcp` through the SDK's own client."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

KG = str(Path(sys.executable).parent / "kg")
NOW = "2026-07-01T09:00"
CLAUDE_EVENTS = {"SessionStart", "SessionEnd", "PostToolUse", "PostToolUseFailure", "Stop", "PreToolUse",
                 "UserPromptSubmit", "Notification", "SubagentStop", "PreCompact"}
TRANSCRIPT = [
    {"type": "user", "message": {"role": "user", "content": "deploy the app please"},
     "timestamp": "2026-07-01T09:01:00Z", "sessionId": "abc"},
    {"type": "user", "message": {"role": "user", "content": "No, that's wrong: you should use pnpm here, not npm."},
     "timestamp": "2026-07-01T09:03:00Z", "sessionId": "abc"},
]


def check_hooks_schema(settings: dict) -> list[str]:
    """Claude Code's settings.json hooks: event -> [{matcher?, hooks: [{type: command, command, timeout?}]}]."""
    commands = []
    for event, groups in settings["hooks"].items():
        assert event in CLAUDE_EVENTS, event
        assert isinstance(groups, list)
        for g in groups:
            assert set(g) <= {"matcher", "hooks"} and isinstance(g["hooks"], list) and g["hooks"]
            assert isinstance(g.get("matcher", ""), str)
            for h in g["hooks"]:
                assert set(h) <= {"type", "command", "timeout"} and h["type"] == "command"
                assert isinstance(h["command"], str) and isinstance(h.get("timeout", 1), int)
                commands.append(h["command"])
    return commands


def sh(command: str, payload: dict | None, cwd: Path, env_now: str = NOW) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "KG_NOW": env_now, "KG_HOOK_WAIT": "1"}  # a session end's work in the foreground
    env.pop("KG_WORKSPACE", None)
    return subprocess.run(check=False, args=command, shell=True,
                          input=json.dumps(payload) if payload is not None else "", capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def ours(settings: dict, event: str) -> str:
    return next(h["command"] for g in settings["hooks"][event] for h in g["hooks"] if "--runtime" in h["command"])


# -- claude code -------------------------------------------------------------------------------------------------
def test_claude_code_install_merges_and_uninstall_restores_the_bytes(ws, run_kg):
    """--shared writes the committed settings.json, calling `kg` from PATH; uninstall gives back every byte,
    formatting included."""
    settings = ws.root / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = '{"model":"opus",  "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [\n' \
               '  {"type": "command", "command": "prettier --write"}]}]}}'
    settings.write_text(original, encoding="utf-8")
    dry = run_kg("install claude-code --shared --dry-run")
    assert dry.exit_code == 0 and "Dry run: nothing was written." in dry.stdout
    assert settings.read_text(encoding="utf-8") == original and not (ws.root / ".mcp.json").exists()
    res = run_kg("install claude-code --shared --json")
    assert res.exit_code == 0
    assert [(c["path"], c["action"]) for c in res.json["changes"]] == [(".claude/settings.json", "update"),
                                                                       (".mcp.json", "create")]
    data = json.loads(settings.read_text(encoding="utf-8"))
    commands = check_hooks_schema(data)
    assert "prettier --write" in commands and data["model"] == "opus"
    assert set(data["hooks"]) == {"PostToolUse", "SessionStart", "SessionEnd", "PostToolUseFailure"}
    ours_ = [c for c in commands if "--runtime" in c]
    assert ours_ and all(c.startswith("kg hook ") and str(ws.root) not in c for c in ours_)
    assert json.loads((ws.root / ".mcp.json").read_text())["mcpServers"]["kaizen-kg"] == {"command": "kg",
                                                                                          "args": ["mcp"]}
    assert run_kg("install claude-code --shared").stdout == f"claude-code: nothing to change in {ws.root}\n"
    undo = run_kg("uninstall claude-code")
    assert undo.exit_code == 0 and "remove" in undo.stdout
    assert settings.read_bytes() == original.encode() and not (ws.root / ".mcp.json").exists()


def test_claude_code_personal_install_by_default(ws, run_kg):
    """The hooks name this machine's paths: they go to the personal settings.local.json, never the shared file;
    success-only PostToolUse(Bash) is not installed (Claude Code sends failures to PostToolUseFailure)."""
    local = ws.root / ".claude" / "settings.local.json"
    local.parent.mkdir()
    original = '{\n\t"permissions": {"allow": ["Bash(ls)"]}\n}\n'
    local.write_text(original, encoding="utf-8")
    assert run_kg("install claude-code").exit_code == 0
    assert not (ws.root / ".claude" / "settings.json").exists()
    data = json.loads(local.read_text(encoding="utf-8"))
    assert set(data["hooks"]) == {"SessionStart", "SessionEnd", "PostToolUseFailure"}
    assert all(str(ws.root) in c for c in check_hooks_schema(data))
    run_kg("uninstall claude-code")
    assert local.read_bytes() == original.encode()


def test_uninstall_after_an_edit_takes_out_only_kg(ws, run_kg):
    run_kg("install claude-code")
    local = ws.root / ".claude" / "settings.local.json"
    data = json.loads(local.read_text(encoding="utf-8"))
    data["model"] = "sonnet"
    local.write_text(json.dumps(data), encoding="utf-8")
    run_kg("uninstall claude-code")
    assert json.loads(local.read_text(encoding="utf-8")) == {"model": "sonnet"}


def test_mcp_is_registered_only_when_kg_mcp_can_start(ws, run_kg, monkeypatch):
    import kg.runtimes.integrations as integ

    monkeypatch.setattr(integ, "mcp_available", lambda: False)
    res = run_kg("install codex --json")
    assert res.exit_code == 0 and "pip install 'kaizen-kg[mcp]'" in res.stderr
    config = tomllib.loads((ws.root / ".codex" / "config.toml").read_text())
    assert config == {"features": {"hooks": True}}
    res = run_kg("install claude-code --json")
    assert not (ws.root / ".mcp.json").exists() and "kaizen-kg[mcp]" in res.stderr


def test_claude_code_uninstall_removes_files_it_created(ws, run_kg):
    run_kg("install claude-code")
    run_kg("uninstall claude-code")
    assert not (ws.root / ".claude").exists() and not (ws.root / ".mcp.json").exists()


def test_claude_code_refuses_broken_settings(ws, run_kg):
    (ws.root / ".claude").mkdir()
    (ws.root / ".claude" / "settings.local.json").write_text("{oops", encoding="utf-8")
    res = run_kg("install claude-code")
    assert res.exit_code == 2 and "is not valid JSON" in res.stderr and "fix it" in res.stderr


def test_unknown_runtime(run_kg):
    res = run_kg("install cursor")
    assert res.exit_code == 2
    assert res.stderr == "Error: unknown runtime 'cursor': use one of claude-code, openclaw, codex\n"


def test_claude_code_hooks_run_with_their_payloads(ws, run_kg, tmp_path):
    """One session as Claude Code would run it: start (brief as additional context), a failed tool (an
    error entry), the end (reflection on the transcript + the session summary)."""
    ws.log("error", "deploy token expired", now="2026-06-30T10:00", priority="critical")
    run_kg("install claude-code")
    data = json.loads((ws.root / ".claude" / "settings.local.json").read_text())
    base = {"session_id": "abc", "transcript_path": str(tmp_path / "abc.jsonl"), "cwd": str(ws.root)}

    start = sh(ours(data, "SessionStart"), {**base, "hook_event_name": "SessionStart", "source": "startup"},
               ws.root)
    assert start.returncode == 0, start.stderr
    out = json.loads(start.stdout)
    assert set(out) == {"hookSpecificOutput"}
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("# kaizen-kg brief — 2026-07-01 09:00") and "deploy token expired" in context
    session = re.search(r"- Session: (\S+) \(started now\)", context).group(1)

    assert "PostToolUse" not in data["hooks"]
    failed = sh(ours(data, "PostToolUseFailure"),
                {**base, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_use_id": "t1",
                 "tool_input": {"command": "git push"}, "error": "fatal: The current branch has no upstream branch.",
                 "is_interrupt": False}, ws.root, "2026-07-01T09:05")
    assert (failed.returncode, failed.stdout) == (0, "")

    Path(base["transcript_path"]).write_text("".join(json.dumps(t) + "\n" for t in TRANSCRIPT), encoding="utf-8")
    end = sh(ours(data, "SessionEnd"), {**base, "hook_event_name": "SessionEnd", "reason": "exit"}, ws.root,
             "2026-07-01T10:00")
    assert end.returncode == 0, end.stderr
    listed = run_kg("list --json").json
    texts = {n["text"]: n for n in listed}
    assert texts["`git push` failed: fatal: The current branch has no upstream branch."]["session"] == session
    assert any("pnpm" in t and n["session"] == session for t, n in texts.items())
    summary = (ws.root / "memory" / "sessions" / f"{session}.md").read_text(encoding="utf-8")
    assert summary.startswith(f"# Session Summary: {session}") and "git push" in summary


def test_hook_cli_text_and_bad_payload(ws, run_kg):
    res = run_kg(f"hook session-start --now {NOW}")
    assert res.exit_code == 0 and res.stdout.startswith("# kaizen-kg brief — 2026-07-01 09:00\n")
    bad = run_kg("hook post-tool-use --runtime claude-code", input="not json")  # a non-blocking error, never 2
    assert bad.exit_code == 1 and "the hook payload on stdin is not JSON" in bad.stderr
    bad = run_kg("hook post-tool-use", input="not json")  # no runtime: bad input, as every command (p15)
    assert bad.exit_code == 2 and "the hook payload on stdin is not JSON" in bad.stderr
    small = run_kg("hook session-start --budget 50")
    assert small.exit_code == 2 and small.stderr == "Error: --budget must be at least 200 characters\n"
    none = run_kg("hook session-end --json", input="")
    assert none.exit_code == 0 and none.json["reflect"] is None
    assert "no transcript: nothing to reflect on" in none.stderr


def test_a_payload_with_an_emoji_cut_in_half_is_logged(ws):
    """A runtime that cuts a tool's output inside an emoji's UTF-16 pair sends a lone surrogate ("\\ud83d"): valid
    JSON, not text. The failure was lost ("not valid UTF-8 text; check the shell's locale", exit 1); now the broken
    half is U+FFFD and the failure is logged."""
    payload = ('{"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": "npm test"}, '
               '"tool_use_id": "toolu_cut", "error": "Exit code 1\\nnpm ERR! test failed \\ud83d"}')
    r = subprocess.run([KG, "-w", str(ws.root), "hook", "post-tool-use", "--json", "--now", "2026-07-01T09:00"],
                       input=payload, capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    logged = json.loads(r.stdout)["logged"]
    assert logged and ws.show(logged)["node"]["text"].endswith("npm ERR! test failed \ufffd")


# -- openclaw ----------------------------------------------------------------------------------------------------
def frontmatter(text: str) -> dict[str, str]:
    assert text.startswith("---\n")
    head = text[4:text.index("\n---\n", 4)]
    return dict(line.split(": ", 1) for line in head.splitlines())


@pytest.mark.skipif(shutil.which("node") is None, reason="node is needed to run handler.js")
def test_openclaw_hook_folder_and_handler(ws, run_kg, tmp_path):
    ws.log("error", "deploy token expired", now="2026-06-30T10:00", priority="critical")
    res = run_kg("install openclaw --json")
    assert res.exit_code == 0
    folder = ws.root / "hooks" / "kaizen-kg"
    assert sorted(p.name for p in folder.iterdir()) == ["HOOK.md", "handler.js"]
    meta = frontmatter((folder / "HOOK.md").read_text(encoding="utf-8"))
    assert meta["name"] == "kaizen-kg" and json.loads(meta["description"])
    events = json.loads(meta["metadata"])["openclaw"]["events"]
    assert "agent:bootstrap" in events and "command:new" in events and "session:end" in events
    assert all(re.fullmatch(r"[a-z]+(:[a-z:]+)?", e) for e in events)
    runner = tmp_path / "run.mjs"
    runner.write_text('const [, , file, ev] = process.argv;\nconst mod = await import("file://" + file);\n'
                      "const event = JSON.parse(ev);\nawait mod.default(event);\n"
                      "process.stdout.write(JSON.stringify(event));\n", encoding="utf-8")

    def node(event: dict) -> dict:
        import os

        env = {**os.environ, "KG_NOW": NOW, "KG_HOOK_WAIT": "1"}
        done = subprocess.run(check=False, args=["node", str(runner), str(folder / "handler.js"), json.dumps(event)],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0 and "kaizen-kg hook error" not in done.stderr, done.stderr
        return json.loads(done.stdout)

    boot = node({"type": "agent", "action": "bootstrap", "sessionKey": "s1", "messages": [],
                 "context": {"workspaceDir": str(ws.root), "bootstrapFiles": [
                     {"name": "AGENTS.md", "path": "AGENTS.md", "content": "# Agents", "missing": False}]}})
    content = boot["context"]["bootstrapFiles"][0]["content"]
    assert content.startswith("# Agents\n\n# kaizen-kg brief — 2026-07-01 09:00") and "deploy token" in content
    assert (ws.root / "memory" / ".hook-context.txt").exists()
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("".join(json.dumps(t) + "\n" for t in TRANSCRIPT), encoding="utf-8")
    node({"type": "command", "action": "new", "sessionKey": "s1", "messages": [],
          "context": {"previousSessionEntry": {"sessionFile": str(transcript)}}})
    assert list((ws.root / "memory" / "sessions").glob("2026-07-01-*.md"))
    assert any("pnpm" in e["text"] for e in run_kg("list --json").json)
    undo = run_kg("uninstall openclaw")
    assert undo.exit_code == 0 and not (ws.root / "hooks").exists()


def test_openclaw_uninstall_keeps_an_edited_handler(ws, run_kg):
    run_kg("install openclaw")
    handler = ws.root / "hooks" / "kaizen-kg" / "handler.js"
    handler.write_text(handler.read_text(encoding="utf-8") + "// mine\n", encoding="utf-8")
    res = run_kg("uninstall openclaw")
    assert res.exit_code == 0 and "handler.js was edited since kg wrote it: kept" in res.stderr
    assert handler.read_text(encoding="utf-8").endswith("// mine\n")
    assert not (ws.root / "hooks" / "kaizen-kg" / "HOOK.md").exists()


def test_openclaw_install_again_keeps_an_edited_handler(ws, run_kg):
    """QA: a second `kg install openclaw` overwrote a handler.js the user had edited (uninstall keeps it)."""
    run_kg("install openclaw")
    handler = ws.root / "hooks" / "kaizen-kg" / "handler.js"
    handler.write_text(handler.read_text(encoding="utf-8") + "// my local tweak\n", encoding="utf-8")
    dry = run_kg("install openclaw --dry-run --json")
    assert dry.exit_code == 0 and not any(c["path"].endswith("handler.js") and c["action"] == "update"
                                          for c in dry.json["changes"]), dry.stdout
    res = run_kg("install openclaw")
    assert res.exit_code == 0 and "handler.js was edited since kg wrote it: kept" in res.stdout + res.stderr
    assert handler.read_text(encoding="utf-8").endswith("// my local tweak\n")
    handler.unlink()
    assert run_kg("install openclaw").exit_code == 0 and "my local tweak" not in handler.read_text(encoding="utf-8")


def test_openclaw_uninstall_leaves_a_foreign_hook(ws, run_kg):
    folder = ws.root / "hooks" / "kaizen-kg"
    folder.mkdir(parents=True)
    (folder / "HOOK.md").write_text("---\nname: mine\n---\n", encoding="utf-8")
    res = run_kg("uninstall openclaw")
    assert res.exit_code == 2 and "was not written by kg" in res.stderr and (folder / "HOOK.md").exists()


# -- codex -------------------------------------------------------------------------------------------------------
def test_codex_install_and_uninstall(ws, run_kg):
    (ws.root / "AGENTS.md").write_text("# Agents\n\nBe brief.\n", encoding="utf-8")
    (ws.root / ".codex").mkdir()
    (ws.root / ".codex" / "config.toml").write_text('model = "o3"\n\n[features]\nweb_search_request = true\n',
                                                    encoding="utf-8")
    before = {p: (ws.root / p).read_text(encoding="utf-8") for p in ("AGENTS.md", ".codex/config.toml")}
    res = run_kg("install codex --json")
    assert res.exit_code == 0
    # trusting hooks is done in Codex's TUI command `/hooks`, not in a folder of that name
    assert any("trust kg's with Codex's `/hooks` command" in n for n in res.json["next"]), res.json["next"]
    hooks = json.loads((ws.root / ".codex" / "hooks.json").read_text())
    check_hooks_schema(hooks)
    assert set(hooks["hooks"]) == {"SessionStart", "Stop", "SessionEnd"}
    config = tomllib.loads((ws.root / ".codex" / "config.toml").read_text())
    assert config["features"] == {"web_search_request": True, "hooks": True} and config["model"] == "o3"
    assert config["mcp_servers"]["kaizen-kg"]["args"][-1] == "mcp"
    agents = (ws.root / "AGENTS.md").read_text(encoding="utf-8")
    assert agents.startswith("# Agents\n\nBe brief.\n\n<!-- kaizen-kg:begin") and " approve N`" in agents
    # the Stop hook logs the rollout's failures and corrections: the block must not have the agent log them too
    assert "do\nnot log those yourself" in agents and "Hooks off only: a command that failed" in agents
    start = sh(ours(hooks, "SessionStart"), {"hook_event_name": "SessionStart", "source": "startup"}, ws.root)
    assert json.loads(start.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    run_kg("uninstall codex")
    assert {p: (ws.root / p).read_text(encoding="utf-8") for p in before} == before
    assert not (ws.root / ".codex" / "hooks.json").exists()


# -- mcp ---------------------------------------------------------------------------------------------------------
def test_mcp_tools_through_the_sdk_client_with_concurrent_cli_writes(ws, need):
    need("mcp")
    import anyio
    from mcp import Client

    from kg.runtimes.mcp_server import build_server

    server = build_server(ws.root)
    n = 6

    def cli_log(i: int) -> int:
        return subprocess.run(check=False,
                              args=[KG, "-w", str(ws.root), "log", "learning", f"cli note {i} about widgets"],
                              capture_output=True, text=True, timeout=120).returncode

    async def main() -> dict:
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert {"log", "search", "recall", "inject", "status", "propose", "approve", "skip", "brief", "show",
                    "resolve"} <= set(tools)
            assert tools["log"].input_schema["required"] == ["kind", "summary"]
            assert tools["log"].input_schema["properties"]["kind"]["enum"] == ["learning", "error", "feature"]
            results: list[int] = []

            async def cli_writes() -> None:
                for i in range(n):
                    results.append(await anyio.to_thread.run_sync(cli_log, i))

            ids = []
            async with anyio.create_task_group() as tg:
                tg.start_soon(cli_writes)
                for i in range(n):
                    r = await client.call_tool("log", {"kind": "error", "summary": f"mcp error {i} in widgets"})
                    assert not r.is_error, r
                    ids.append(r.structured_content["id"])
            assert results == [0] * n
            found = await client.call_tool("search", {"query": "widgets", "limit": 50})
            brief = await client.call_tool("brief", {})
            bad = await client.call_tool("approve", {"number": 99})
            return {"ids": ids, "search": found.structured_content, "brief": brief.structured_content,
                    "bad": bad}

    out = anyio.run(main)
    assert len(set(out["ids"])) == n
    assert out["bad"].is_error and "no proposal #99" in out["bad"].content[0].text
    assert out["brief"]["text"].startswith("# kaizen-kg brief")
    listed = subprocess.run(check=False, args=[KG, "-w", str(ws.root), "list", "--limit", "100", "--json"],
                            capture_output=True, text=True, timeout=120)
    entries = [e for e in json.loads(listed.stdout) if e["kind"] == "event"]
    assert sorted(e["text"] for e in entries) == sorted([f"cli note {i} about widgets" for i in range(n)]
                                                        + [f"mcp error {i} in widgets" for i in range(n)])


@pytest.mark.slow
def test_every_command_an_install_writes_runs(ws, tmp_path, need):
    """The AGENTS.md block and every hook of every install name only commands and options kg has: each is run
    (placeholders filled in) and none is refused as usage."""
    import shlex

    need("mcp")  # the MCP server's command is among them; it is registered only when mcp imports

    for runtime in ("claude-code", "codex", "openclaw"):
        done = subprocess.run([KG, "-w", str(ws.root), "install", runtime], capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    agents = (ws.root / "AGENTS.md").read_text(encoding="utf-8")
    block = agents[agents.index("<!-- kaizen-kg:begin"):]
    commands = [c for c in re.findall(r"`([^`]+)`", block.replace("\n  ", " ")) if c.startswith(shlex.quote(KG))]
    hooks = json.loads((ws.root / ".claude" / "settings.local.json").read_text())["hooks"]
    hooks_codex = json.loads((ws.root / ".codex" / "hooks.json").read_text())["hooks"]
    commands += [h["command"] for groups in [*hooks.values(), *hooks_codex.values()] for g in groups
                 for h in g["hooks"]]
    handler = (ws.root / "hooks" / "kaizen-kg" / "handler.js").read_text(encoding="utf-8")
    js = re.findall(r'\["hook", "([a-z-]+)"(?:, "([a-z-]+)")*', handler)
    commands += [f"{KG} -w {ws.root} hook {name} --runtime openclaw" for name, _ in js]
    config = tomllib.loads((ws.root / ".codex" / "config.toml").read_text())
    server = config["mcp_servers"]["kaizen-kg"]
    commands.append(shlex.join([server["command"], *server["args"]]))
    assert len(commands) >= 15
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TRANSCRIPT), encoding="utf-8")
    for command in commands:
        command = (command.replace("PATH", str(tmp_path / "t.jsonl")).replace(" approve N", " approve 1")
                   .replace(" skip N", " skip 1"))
        done = sh(command, {}, ws.root)
        refused = ("No such option", "Invalid value", "Missing argument", "Missing option", "unexpected extra argument",
                   "No such command", "Usage:")
        assert not any(r in done.stderr for r in refused), (command, done.stderr)


def test_session_end_no_summary_keeps_the_session_open_on_a_real_rollout(ws, run_kg):
    # Codex's Stop runs `kg hook session-end --no-summary` after every turn: a turn whose rollout logs something
    # must not end the kg session (the next turn's entries would belong to none) nor write its summary.
    from tests.conftest import shared_data_dir

    rollout = (shared_data_dir() / "runtimes" / "codex" / "transcripts"
               / "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl")
    sid = run_kg(f"session start --now {NOW} --json").json["id"]
    kept = run_kg(f"hook session-end --no-summary --transcript {rollout} --now {NOW} --json")
    assert kept.exit_code == 0, kept.stderr
    assert kept.json["reflect"]["logged"] and kept.json["summary_file"] is None
    assert ws.current_session() == sid
    assert not (ws.root / "memory" / "sessions" / f"{sid}.md").exists()
    ended = run_kg(f"hook session-end --transcript {rollout} --now {NOW} --json")  # the real end writes it
    assert ended.exit_code == 0 and ended.json["summary_file"]


@pytest.mark.parametrize("first, then", [("", " --shared"), (" --shared", "")])
def test_claude_code_install_into_the_other_settings_file_moves_the_hooks(ws, run_kg, first, then):
    """Claude Code runs the hooks of settings.json and settings.local.json both: installing into one takes kg's
    hooks out of the other (as uninstall would: bytes back when untouched), or every session got two briefs."""
    local, shared = ws.root / ".claude" / "settings.local.json", ws.root / ".claude" / "settings.json"
    local.parent.mkdir()
    original = '{"permissions": {"allow": ["Bash(ls)"]}}'  # the first install's file, the person's before it
    (shared if first else local).write_text(original, encoding="utf-8")
    assert run_kg(f"install claude-code{first}").exit_code == 0
    res = run_kg(f"install claude-code{then} --json")
    assert res.exit_code == 0 and any("moved" in n for n in res.json["notes"])
    target, other = (shared, local) if then else (local, shared)
    assert other.read_text(encoding="utf-8") == original
    assert len([c for c in check_hooks_schema(json.loads(target.read_text())) if "--runtime" in c]) == 3
    assert run_kg(f"install claude-code{then}").stdout == f"claude-code: nothing to change in {ws.root}\n"
    run_kg("uninstall claude-code")
    assert not target.exists() and other.read_text(encoding="utf-8") == original
