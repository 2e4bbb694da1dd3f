"""`kg install claude-code|openclaw|codex`: wire kg into an agent runtime; `kg uninstall` takes it out again.

Everything is written inside the project (the workspace root unless `project` says otherwise); nothing under
the home directory is touched. Each install merges into what is there (other hooks, settings and text stay as
they are) and marks what it adds, so uninstall removes exactly that:

- claude-code: `.claude/settings.json` hooks (SessionStart → the brief as additional context; SessionEnd →
  reflect on the transcript and write the session summary; PostToolUse(Bash) and PostToolUseFailure → log the
  error) and the `kaizen-kg` MCP server in `.mcp.json`. kg's hook commands carry `--runtime claude-code`,
  which is how they are found again.
- openclaw: the hook folder `hooks/kaizen-kg/` with `HOOK.md` and `handler.js` (agent:bootstrap → the brief in
  the agent's context; command:new/reset/stop → reflect and summarise; gateway:startup → the seed's
  memory/.hook-context.txt). The handler calls the `kg` command with child_process.
- codex: `.codex/hooks.json` (SessionStart, Stop, PostToolUse; Codex's hooks take Claude Code's schema),
  a marked block in `.codex/config.toml` (the MCP server and the `codex_hooks` feature flag), and a marked
  block in AGENTS.md telling the agent how to call kg (which is all older Codex versions read).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg.errors import UsageError
from kg.journal import write_atomic

RUNTIMES = ("claude-code", "openclaw", "codex")
SERVER_NAME = "kaizen-kg"
HOOK_DIR = Path("hooks") / "kaizen-kg"
BEGIN, END = "<!-- kaizen-kg:begin (kg install codex; remove with kg uninstall codex) -->", "<!-- kaizen-kg:end -->"
TOML_BEGIN, TOML_END = "# >>> kaizen-kg (kg install codex; remove with kg uninstall codex) >>>", "# <<< kaizen-kg <<<"
TOML_MARK = "  # kaizen-kg"
OPENCLAW_MARK = "<!-- kaizen-kg managed: remove with `kg uninstall openclaw` -->"


@dataclass
class Change:
    path: str
    action: str  # create | update | remove | unchanged
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "action": self.action, "detail": self.detail}


# -- the kg command the runtimes call -------------------------------------------------------------------------
def kg_executable() -> str:
    """The `kg` script of this installation (beside the running Python), else the one on PATH, else `kg`."""
    here = Path(sys.executable).parent / "kg"
    if here.exists():
        return str(here)
    return shutil.which("kg") or "kg"


def _argv(ws: Any, kg_bin: str | None, *args: str) -> list[str]:
    return [kg_bin or kg_executable(), "-w", str(ws.root), *args]


def _shell(argv: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)


def _marker(runtime: str) -> re.Pattern[str]:
    return re.compile(r"\bhook (session-start|session-end|post-tool-use)\b.*--runtime " + re.escape(runtime)
                      + r"(\s|$)")


# -- JSON settings merging (pure) ------------------------------------------------------------------------------
def hook_entries(ws: Any, runtime: str, kg_bin: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """The hook groups kg adds, by event, in Claude Code's settings schema (Codex's hooks.json is the same)."""
    start = _shell(_argv(ws, kg_bin, "hook", "session-start", "--start-session", "--runtime", runtime))
    tool = _shell(_argv(ws, kg_bin, "hook", "post-tool-use", "--runtime", runtime))

    def group(matcher: str | None, command: str, timeout: int) -> dict[str, Any]:
        g: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        g["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
        return g

    if runtime == "claude-code":
        end = _shell(_argv(ws, kg_bin, "hook", "session-end", "--runtime", runtime))
        return {
            "SessionStart": [group("startup|resume|clear|compact", start, 30)],
            "SessionEnd": [group(None, end, 120)],
            "PostToolUse": [group("Bash", tool, 30)],
            "PostToolUseFailure": [group("*", tool, 30)],
        }
    if runtime == "codex":
        # Codex has no session-end event: Stop (end of each turn) reflects on the transcript so far; a transcript
        # reflected on before adds nothing twice. The summary is written by `kg session end`.
        end = _shell(_argv(ws, kg_bin, "hook", "session-end", "--no-summary", "--runtime", runtime))
        return {
            "SessionStart": [group("startup|resume", start, 30)],
            "Stop": [group(None, end, 120)],
            "PostToolUse": [group("Bash", tool, 30)],
        }
    raise UsageError(f"no hook settings for runtime {runtime!r}")


def strip_hooks(settings: dict[str, Any], runtime: str) -> tuple[dict[str, Any], int]:
    """`settings` without kg's handlers for `runtime` (groups and events left empty by that go too). Pure."""
    mark = _marker(runtime)
    out = dict(settings)
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return out, 0
    removed = 0
    new_hooks: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            new_hooks[event] = groups
            continue
        kept_groups = []
        for g in groups:
            if not isinstance(g, dict) or not isinstance(g.get("hooks"), list):
                kept_groups.append(g)
                continue
            kept = [h for h in g["hooks"] if not (isinstance(h, dict) and mark.search(str(h.get("command", ""))))]
            removed += len(g["hooks"]) - len(kept)
            if kept:
                kept_groups.append({**g, "hooks": kept})
            elif not g["hooks"]:
                kept_groups.append(g)
        if kept_groups or not groups:
            new_hooks[event] = kept_groups
    if new_hooks:
        out["hooks"] = new_hooks
    else:
        out.pop("hooks", None)
    return out, removed


def merge_hooks(settings: dict[str, Any], entries: dict[str, list[dict[str, Any]]],
                runtime: str) -> dict[str, Any]:
    """`settings` with kg's hook groups in place of any earlier kg ones; everything else kept as it was. Pure."""
    out, _ = strip_hooks(settings, runtime)
    hooks = dict(out.get("hooks") or {})
    for event, groups in entries.items():
        hooks[event] = list(hooks.get(event) or []) + groups
    out["hooks"] = hooks
    return out


def merge_mcp(config: dict[str, Any], argv: list[str]) -> dict[str, Any]:
    servers = dict(config.get("mcpServers") or {})
    servers[SERVER_NAME] = {"command": argv[0], "args": argv[1:]}
    return {**config, "mcpServers": servers}


def strip_mcp(config: dict[str, Any]) -> dict[str, Any]:
    out = dict(config)
    servers = dict(out.get("mcpServers") or {})
    servers.pop(SERVER_NAME, None)
    if servers:
        out["mcpServers"] = servers
    else:
        out.pop("mcpServers", None)
    return out


# -- marked text blocks (pure) ---------------------------------------------------------------------------------
def put_block(text: str, body: str, begin: str = BEGIN, end: str = END) -> str:
    block = f"{begin}\n{body.rstrip()}\n{end}\n"
    start, stop = text.find(begin), text.find(end)
    if start >= 0 and stop > start:
        return text[:start] + block + text[stop + len(end):].lstrip("\n")
    if not text:
        return block
    return text.rstrip("\n") + "\n\n" + block


def drop_block(text: str, begin: str = BEGIN, end: str = END) -> str:
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        return text
    before, after = text[:start].rstrip("\n"), text[stop + len(end):].lstrip("\n")
    if before and after:
        return before + "\n\n" + after
    return (before + "\n" if before else "") + after


def codex_toml(text: str, argv: list[str]) -> str:
    """config.toml with kg's MCP server and the hooks feature flag, in a marked block (or, when the file has a
    [features] table already, one marked line in it). Pure; the result is checked to parse."""
    text = codex_toml_strip(text)
    try:
        current = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f".codex/config.toml is not valid TOML ({exc}); fix it, then run the install again") \
            from None
    lines = [f"[mcp_servers.{SERVER_NAME}]", f"command = {json.dumps(argv[0])}",
             "args = [" + ", ".join(json.dumps(a) for a in argv[1:]) + "]"]
    features = current.get("features")
    if isinstance(features, dict):
        if "codex_hooks" not in features:
            out = re.sub(r"(?m)^\[features\][ \t]*$", "[features]\ncodex_hooks = true" + TOML_MARK, text, count=1)
            text = out
    else:
        lines = ["[features]", "codex_hooks = true", ""] + lines
    body = "\n".join(lines)
    new = (text.rstrip("\n") + "\n\n" if text.strip() else "") + f"{TOML_BEGIN}\n{body}\n{TOML_END}\n"
    tomllib.loads(new)
    return new


def codex_toml_strip(text: str) -> str:
    text = drop_block(text, TOML_BEGIN, TOML_END)
    return "".join(line for line in text.splitlines(keepends=True) if not line.rstrip("\n").endswith(TOML_MARK))


AGENTS_BODY = """## kaizen-kg (learning memory)

This project keeps what agents learn in kaizen-kg (`kg`). Please:
- At the start of a session, run `{kg} hook session-start --start-session` and read the brief (pending
  high-priority items, verifications due, proposals waiting for the user, the watch list).
- When a command fails, run `{kg} log error "what failed" --error-text "the message"`.
- When the user corrects you or states a preference, run `{kg} log learning "what you learned" --category
  correction` (or `--category preference`).
- Before a task, `{kg} search "words of the task"` finds what was learned before; `{kg} inject "the task"`
  gives a ready memory block.
- Show waiting proposals (`{kg} propose`) to the user. When they say "approve N" run `{kg} approve N`;
  "skip N" → `{kg} skip N --reason "their reason"`.
- At the end of a session, run `{kg} hook session-end --transcript PATH` (or `{kg} session end`).
"""


# -- file helpers -----------------------------------------------------------------------------------------------
def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not valid JSON ({exc}); fix it, then run the command again") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} must hold a JSON object")
    return data


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


class _Plan:
    def __init__(self, project: Path, dry_run: bool):
        self.project, self.dry_run, self.changes = project, dry_run, []

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.project))
        except ValueError:
            return str(path)

    def write(self, path: Path, text: str, detail: str) -> None:
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old == text:
            self.changes.append(Change(self.rel(path), "unchanged", detail))
            return
        self.changes.append(Change(self.rel(path), "create" if old is None else "update", detail))
        if not self.dry_run:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text.encode("utf-8"))

    def remove(self, path: Path, detail: str) -> None:
        if not path.exists():
            return
        self.changes.append(Change(self.rel(path), "remove", detail))
        if not self.dry_run:
            path.unlink()
            parent = path.parent
            while parent != self.project and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent

    def json_edit(self, path: Path, new: dict[str, Any], detail: str, *, existed: bool) -> None:
        if not new and existed:
            self.remove(path, detail + " (nothing else was in it)")
        elif new or existed:
            self.write(path, _dump(new), detail)


# -- install / uninstall -----------------------------------------------------------------------------------------
def _check(runtime: str) -> str:
    name = (runtime or "").strip().lower()
    if name not in RUNTIMES:
        raise UsageError(f"unknown runtime {runtime!r}: use one of {', '.join(RUNTIMES)}")
    return name


def install(ws: Any, runtime: str, dry_run: bool = False, *, project: str | Path | None = None,
            kg_bin: str | None = None) -> dict[str, Any]:
    runtime = _check(runtime)
    root = Path(project).resolve() if project else Path(ws.root)
    plan = _Plan(root, dry_run)
    mcp_argv = _argv(ws, kg_bin, "mcp")
    if runtime == "claude-code":
        path = root / ".claude" / "settings.json"
        settings = _read_json(path)
        plan.write(path, _dump(merge_hooks(settings, hook_entries(ws, runtime, kg_bin), runtime)),
                   "hooks: SessionStart (brief), SessionEnd (reflect + summary), PostToolUse/PostToolUseFailure "
                   "(log errors)")
        mcp = root / ".mcp.json"
        plan.write(mcp, _dump(merge_mcp(_read_json(mcp), mcp_argv)), f"MCP server {SERVER_NAME!r} (`kg mcp`)")
        nxt = ["Start Claude Code in this folder: the session begins with kg's brief.",
               "Claude Code asks once to trust the project's MCP server `kaizen-kg`."]
    elif runtime == "openclaw":
        folder = root / HOOK_DIR
        plan.write(folder / "HOOK.md", openclaw_hook_md(), "OpenClaw hook metadata and documentation")
        plan.write(folder / "handler.js", openclaw_handler(ws, kg_bin), "OpenClaw hook handler (calls `kg`)")
        nxt = [(f"Run `openclaw hooks enable {SERVER_NAME}` (OpenClaw finds hooks in <workspace>/hooks/), then "
                "restart the gateway."),
               "If the OpenClaw workspace is not this folder, install with --project <openclaw workspace>."]
    else:
        path = root / ".codex" / "hooks.json"
        plan.write(path, _dump(merge_hooks(_read_json(path), hook_entries(ws, runtime, kg_bin), runtime)),
                   "hooks: SessionStart (brief), Stop (reflect), PostToolUse (log errors)")
        cfg = root / ".codex" / "config.toml"
        old = cfg.read_text(encoding="utf-8") if cfg.exists() else ""
        plan.write(cfg, codex_toml(old, mcp_argv), f"MCP server {SERVER_NAME!r} and features.codex_hooks")
        agents = root / "AGENTS.md"
        text = agents.read_text(encoding="utf-8") if agents.exists() else ""
        plan.write(agents, put_block(text, AGENTS_BODY.format(kg=_shell(_argv(ws, kg_bin)))),
                   "how the agent calls kg (a marked block)")
        nxt = ["Codex reads the project's .codex/ folder once the project is trusted; review the hooks in /hooks.",
               "Older Codex versions without hooks follow the AGENTS.md block."]
    return {"runtime": runtime, "project": str(root), "dry_run": dry_run,
            "changes": [c.as_dict() for c in plan.changes], "next": nxt}


def uninstall(ws: Any, runtime: str, dry_run: bool = False, *, project: str | Path | None = None) -> dict[str, Any]:
    runtime = _check(runtime)
    root = Path(project).resolve() if project else Path(ws.root)
    plan = _Plan(root, dry_run)
    if runtime in ("claude-code", "codex"):
        path = root / (".claude/settings.json" if runtime == "claude-code" else ".codex/hooks.json")
        if path.exists():
            settings = _read_json(path)
            new, removed = strip_hooks(settings, runtime)
            if removed:
                plan.json_edit(path, new, f"removed {removed} kg hook(s)", existed=True)
    if runtime == "claude-code":
        mcp = root / ".mcp.json"
        if mcp.exists():
            config = _read_json(mcp)
            if SERVER_NAME in (config.get("mcpServers") or {}):
                plan.json_edit(mcp, strip_mcp(config), f"removed MCP server {SERVER_NAME!r}", existed=True)
    elif runtime == "openclaw":
        folder = root / HOOK_DIR
        md = folder / "HOOK.md"
        if md.exists() and OPENCLAW_MARK not in md.read_text(encoding="utf-8"):
            raise UsageError(f"{plan.rel(md)} was not written by kg (its marker is gone); remove the folder by hand")
        for name in ("handler.js", "HOOK.md"):
            plan.remove(folder / name, "kg's OpenClaw hook")
    else:
        cfg = root / ".codex" / "config.toml"
        if cfg.exists():
            old = cfg.read_text(encoding="utf-8")
            new = codex_toml_strip(old)
            if new != old:
                if new.strip():
                    plan.write(cfg, new, "removed kg's block")
                else:
                    plan.remove(cfg, "removed kg's block (nothing else was in it)")
        agents = root / "AGENTS.md"
        if agents.exists():
            old = agents.read_text(encoding="utf-8")
            new = drop_block(old)
            if new != old:
                if new.strip():
                    plan.write(agents, new, "removed kg's block")
                else:
                    plan.remove(agents, "removed kg's block (nothing else was in it)")
    return {"runtime": runtime, "project": str(root), "dry_run": dry_run,
            "changes": [c.as_dict() for c in plan.changes], "next": []}


# -- OpenClaw files -----------------------------------------------------------------------------------------------
OPENCLAW_EVENTS = ["agent:bootstrap", "command:new", "command:reset", "command:stop", "gateway:startup"]


def openclaw_hook_md() -> str:
    meta = json.dumps({"openclaw": {"emoji": "🧠", "events": OPENCLAW_EVENTS}}, ensure_ascii=False)
    return f"""---
name: {SERVER_NAME}
description: "kaizen-kg learning memory: kg's brief at session start; reflection and a session summary on /new, /reset and /stop"
metadata: {meta}
---

# kaizen-kg

{OPENCLAW_MARK}

Connects OpenClaw to kaizen-kg, the learning memory kept in the kg workspace.

## What it does

- **agent:bootstrap**: runs `kg hook session-start`, and adds kg's brief (pending high-priority items,
  verifications due, patterns ready for promotion, proposals waiting, the watch list) to the agent's
  AGENTS.md context for the session. It also writes `memory/.hook-context.txt`.
- **command:new / command:reset / command:stop**: runs `kg hook session-end` on the session's transcript: the
  corrections, errors and requests in it are logged, and the session summary is written to
  `memory/sessions/`.
- **gateway:startup**: writes `memory/.hook-context.txt` (the file the seed's hook wrote).

## Requirements

The `kg` command (the path is set in handler.js; the `KG_BIN` and `KG_WORKSPACE` environment variables
override it). Remove with `kg uninstall openclaw`.
"""


def openclaw_handler(ws: Any, kg_bin: str | None = None) -> str:
    return """// kaizen-kg managed hook (kg install openclaw); remove with `kg uninstall openclaw`.
import { execFileSync } from "node:child_process";
import path from "node:path";

const KG = process.env.KG_BIN || %(kg)s;
const WORKSPACE = process.env.KG_WORKSPACE || %(ws)s;
const TIMEOUT_MS = 60000;

function kg(args) {
  return execFileSync(KG, ["-w", WORKSPACE, ...args, "--runtime", "openclaw"], {
    encoding: "utf8", timeout: TIMEOUT_MS, input: "", stdio: ["pipe", "pipe", "pipe"],
  });
}

function transcriptOf(ctx) {
  const entry = ctx.previousSessionEntry || ctx.sessionEntry || {};
  return entry.sessionFile || ctx.sessionFile || null;
}

function addToBootstrap(ctx, text) {
  if (!Array.isArray(ctx.bootstrapFiles)) return false;
  const agents = ctx.bootstrapFiles.find((f) => f && f.name === "AGENTS.md");
  if (agents && !agents.missing && typeof agents.content === "string") {
    agents.content = agents.content + "\\n\\n" + text;
  } else if (agents) {
    agents.content = text;
    agents.missing = false;
  } else {
    ctx.bootstrapFiles.push({ name: "AGENTS.md", path: path.join(WORKSPACE, "AGENTS.md"), content: text, missing: false });
  }
  return true;
}

const handler = async (event) => {
  try {
    const ctx = event.context || {};
    if (event.type === "agent" && event.action === "bootstrap") {
      const brief = JSON.parse(kg(["hook", "session-start", "--json", "--start-session", "--write"]));
      addToBootstrap(ctx, brief.text);
    } else if (event.type === "gateway" && event.action === "startup") {
      kg(["hook", "session-start", "--write"]);
    } else if (event.type === "command" && ["new", "reset", "stop"].includes(event.action)) {
      const transcript = transcriptOf(ctx);
      const args = ["hook", "session-end", "--json"];
      if (transcript) args.push("--transcript", transcript);
      const done = JSON.parse(kg(args));
      const logged = done.reflect ? done.reflect.logged.length : 0;
      if (logged && Array.isArray(event.messages)) {
        event.messages.push(`🧠 kaizen-kg: ${logged} new entr${logged === 1 ? "y" : "ies"} from this session`);
      }
    }
  } catch (err) {
    console.error(`kaizen-kg hook error: ${err && err.message ? err.message : err}`);
  }
};

export default handler;
""" % {"kg": json.dumps(kg_bin or kg_executable()), "ws": json.dumps(str(ws.root))}  # noqa: UP031 - JS braces
