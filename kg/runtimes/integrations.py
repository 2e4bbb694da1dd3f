"""`kg install claude-code|openclaw|codex`: wire kg into an agent runtime; `kg uninstall` takes it out again.

Everything is written inside the project (the workspace root unless `project` says otherwise); nothing under
the home directory is touched. Each install merges into what is there (other hooks, settings and text stay as
they are) and marks what it adds, so uninstall removes exactly that:

- claude-code: hooks in `.claude/settings.local.json` (personal, git-ignored; `--shared` writes the committed
  `.claude/settings.json` instead, calling `kg` from PATH with no path of this machine): SessionStart → the
  brief as additional context; SessionEnd → reflect on the transcript and write the session summary (answering
  at once: the work runs in a detached child, as Claude Code cancels hooks still running when it exits);
  PostToolUseFailure → log the error (Claude Code sends failed calls there only, so no PostToolUse hook costs
  time on every successful call). The `kaizen-kg` MCP server goes in `.mcp.json` when `kg mcp` can start (the
  `mcp` package imports). kg's hook commands carry `--runtime claude-code`, which is how they are found again.
- openclaw: the hook folder `hooks/kaizen-kg/` with `HOOK.md` and `handler.js` (agent:bootstrap → the brief in
  the agent's context; command:new/reset/stop and session:end → reflect and summarise; gateway:startup → the
  seed's memory/.hook-context.txt). The handler returns at once and runs `kg` detached.
- codex: `.codex/hooks.json` (SessionStart → the brief; Stop → reflect on the rollout so far, detached, always
  exit 0; SessionEnd → reflect and summarise, detached; Codex has no failure event and its PostToolUse carries no exit
  status, so failures come from the rollout), marked blocks in `.codex/config.toml` (the `hooks` feature flag,
  and the MCP server when `kg mcp` can start: `kg/runtimes/codex_toml.py`), and a marked block in AGENTS.md
  telling the agent how to call kg. Every block is written by the one block editor, `kg/lifecycle/blocks.py`:
  a person's edit inside it is flagged and kept, text outside it stays byte for byte.

Every file an install writes is recorded with its bytes before (`memory/.kg/installs.json`); uninstall puts
those bytes back when the file is as kg left it, and otherwise takes out only kg's part. What one run reads,
writes, records and puts back is its plan (`kg/runtimes/install_plan.py`); this module decides, per runtime, what
goes where.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kg.core.errors import UnusableFile, UsageError
from kg.core.files import check_folder, retried
from kg.runtimes import codex_toml
from kg.runtimes.agents_block import (
    AGENTS_BODY,
    LEGACY_BEGIN,  # noqa: F401 - re-exported: imported from this module
    LEGACY_END,  # noqa: F401 - re-exported: imported from this module
    agents_plan,  # noqa: F401 - re-exported: imported from this module
    upgrade_legacy,  # noqa: F401 - re-exported: imported from this module
)
from kg.runtimes.hook_commands import (  # noqa: F401 - hook_entries, merge_mcp, strip_mcp: imported from here too
    MCP_MISSING,
    _argv,
    _shell,
    hook_entries,
    kg_executable,
    mcp_available,
    merge_mcp,
    strip_mcp,
)
from kg.runtimes.hook_settings import edited_hooks, merge_hooks, strip_hooks
from kg.runtimes.install_paths import unfound
from kg.runtimes.install_plan import Change, _dump, _Plan
from kg.runtimes.openclaw_hook import OPENCLAW_MARK, SERVER_NAME, openclaw_handler, openclaw_hook_md

RUNTIMES = ("claude-code", "openclaw", "codex")
HOOK_DIR = Path("hooks") / "kaizen-kg"
HOOK_MD, HANDLER_JS = "HOOK.md", "handler.js"  # OpenClaw's hook, in HOOK_DIR
MCP_JSON = Path(".mcp.json")
CODEX_HOOKS = Path(".codex") / "hooks.json"
CODEX_CONFIG = Path(".codex") / "config.toml"
AGENTS_MD = Path("AGENTS.md")


def install_files(root: Path) -> dict[str, tuple[Path, ...]]:
    """Runtime → the files `kg install` writes into the project `root` (either claude-code settings file: `--shared`
    picks one). What else must not replace them (an export's `--out`: kg/workspace_out.py) reads them here."""
    return {"claude-code": (_claude_settings(root, False), _claude_settings(root, True), root / MCP_JSON),
            "openclaw": (root / HOOK_DIR / HOOK_MD, root / HOOK_DIR / HANDLER_JS),
            "codex": (root / CODEX_HOOKS, root / CODEX_CONFIG, root / AGENTS_MD)}


# -- install / uninstall -----------------------------------------------------------------------------------------
def _check(runtime: str) -> str:
    name = (runtime or "").strip().lower()
    if name not in RUNTIMES:
        raise UsageError(f"unknown runtime {runtime!r}: use one of {', '.join(RUNTIMES)}")
    return name


def _claude_settings(root: Path, shared: bool) -> Path:
    return root / ".claude" / ("settings.json" if shared else "settings.local.json")


def _project(ws: Any, project: str | Path | None) -> Path:
    """The folder install writes into: the workspace root, or `--project`, which must be a folder that exists
    (a mistyped path made a new folder tree and wrote the runtime's settings there, which no runtime reads)."""
    if not project:
        return Path(ws.root)
    root = Path(project).expanduser().resolve()
    if not root.is_dir():
        raise UsageError(f"the project folder {project} {'is not a folder' if root.exists() else 'does not exist'}: "
                         "give the folder the agent runs in")
    return root


def _again(verb: str, runtime: str, project: str | Path | None, *flags: str) -> str:
    """The command that runs this install or uninstall again with `flags`."""
    where = ("--project", str(project)) if project else ()
    return _shell(["kg", verb, runtime, *where, *flags])


def _write_hooks(plan: _Plan, path: Path, runtime: str, entries: dict[str, Any], detail: str) -> None:
    """kg's current hook entries in a settings file, but for those a person edited since kg wrote them: kept where
    and as they are, with a note (an unedited one is brought to the current; others' entries are not touched)."""
    settings = plan.read_json(path)
    edited = {} if plan.force else edited_hooks(settings, runtime, plan.wrote_hooks(runtime, path), entries)
    for name, what in edited.items():
        plan.notes.append(f"{plan.rel(path)}: kg's {name.split()[0]} hook was edited since kg wrote it ({what}): "
                          f"kept; `{plan.again}` puts kg's back (your edit is lost)")
    if edited:
        detail += f"; kept as you edited: {', '.join(name.split()[0] for name in edited)}"
    plan.write(path, _dump(merge_hooks(settings, entries, runtime, frozenset(edited))), detail, runtime,
               hooks=entries)


def written_files(root: Path) -> list[Path]:
    """Every file `kg install` writes in a project folder, whichever the runtime: `kg doctor` checks that none leads
    out of the workspace, which install refuses (`_refuse_outside`)."""
    return [_claude_settings(root, True), _claude_settings(root, False), root / MCP_JSON, root / HOOK_DIR / HOOK_MD,
            root / HOOK_DIR / HANDLER_JS, root / CODEX_HOOKS, root / CODEX_CONFIG, root / AGENTS_MD]


def _refuse_outside(*files: Path) -> None:
    """Refuse (UnusableFile, exit 1) an install before it writes anything when a file it writes leads out of the
    workspace through a link (AGENTS.md, .claude/, .codex/: QA3 #3 found kg's block written into the file a linked
    AGENTS.md led to), as `kg cycle` and `kg export memory` refuse it. A `--project` folder outside any workspace is
    the person's to name, and is written as it is."""
    for path in files:
        check_folder(path)


def _carried(run: Callable[[list[_Plan]], dict[str, Any]]) -> dict[str, Any]:
    """Run an install or uninstall (`run`, which puts its plan in the list it is given), again from a fresh read
    when a file it writes was written by someone else after it was read (FileChanged, `retried`): what was
    written before that is recorded first (installs.json), so that uninstall can still put its bytes back, and
    is kept in the report (`_with_earlier`)."""
    earlier: list[Change] = []

    def once() -> dict[str, Any]:
        made: list[_Plan] = []
        try:
            return _with_earlier(run(made), earlier)
        except UnusableFile:  # (FileChanged is retried; a link out of the workspace is not: what was written
            # before it is recorded all the same)
            if made and made[0].done:
                made[0].save()
                earlier.extend(made[0].done)
            raise
    return retried(once)


def _with_earlier(result: dict[str, Any], earlier: list[Change]) -> dict[str, Any]:
    """The report of the attempt that succeeded, with what earlier attempts wrote (there: "unchanged" or absent)."""
    changes, before = result["changes"], []
    for c in earlier:
        same = next((x for x in changes if x["path"] == c.path), None)
        if same is None:
            before.append(c.as_dict())  # first, as they were written
        elif same["action"] == "unchanged":
            same.update(c.as_dict())
        elif c.action == "create" and same["action"] == "update":
            same["action"] = "create"
    result["changes"] = before + changes
    return result


def install(ws: Any, runtime: str, dry_run: bool = False, *, project: str | Path | None = None,
            kg_bin: str | None = None, shared: bool = False, force: bool = False) -> dict[str, Any]:
    """Wire kg into `runtime`. Run again, it brings kg's parts to the current ones and keeps, with a note, those a
    person edited since kg wrote them (a hook entry, the OpenClaw hook's files, a marked block); `force` rewrites
    them all the same. A file a person writes while kg installs is read again, their edit kept (`_carried`)."""
    return _carried(lambda made: _install(made, ws, runtime, dry_run, project, kg_bin, shared, force))


def _install(made: list[_Plan], ws: Any, runtime: str, dry_run: bool, project: str | Path | None,
             kg_bin: str | None, shared: bool, force: bool) -> dict[str, Any]:
    runtime = _check(runtime)
    if shared and runtime != "claude-code":
        raise UsageError("--shared is for claude-code (its committed .claude/settings.json); drop it for "
                         f"{runtime}")
    root = _project(ws, project)
    again = _again("install", runtime, project, *(["--shared"] if shared else []), "--force")
    plan = _Plan(ws, root, dry_run, force, again)
    made.append(plan)
    mcp_argv = _argv(ws, kg_bin, "mcp", shared=shared) if mcp_available() else None
    if mcp_argv is None and runtime != "openclaw":
        plan.notes.append(MCP_MISSING)
    if runtime == "claude-code":
        path = _claude_settings(root, shared)
        other = _claude_settings(root, not shared)
        _refuse_outside(path, *([root / MCP_JSON] if mcp_argv else []))
        # Claude Code runs the hooks of both files, and kg's two commands differ (PATH vs this machine's path),
        # so hooks left in the other file would brief the agent twice and reflect on every session twice
        if other.exists() and _drop_claude_hooks(plan, other):
            plan.notes.append(f"kg's hooks moved from {plan.rel(other)} to {plan.rel(path)}: Claude Code runs "
                              "the hooks of both files, so kg's would have run twice")
        _write_hooks(plan, path, runtime, hook_entries(ws, runtime, kg_bin, shared=shared),
                     "hooks: SessionStart (brief), SessionEnd (reflect + summary), PostToolUseFailure (log errors)")
        if mcp_argv:
            mcp = root / MCP_JSON
            plan.write(mcp, _dump(merge_mcp(plan.read_json(mcp), mcp_argv)), f"MCP server {SERVER_NAME!r} (`kg mcp`)",
                       runtime)
        off_path = shared and unfound("kg")  # the team's file calls `kg` from PATH
        if off_path:  # else "the session begins with kg's brief" promised a brief no hook could give (QA1 #6)
            plan.notes.append(f"`kg` is not on PATH here: the hooks in {plan.rel(path)} call `kg` from PATH, so they "
                              "will not be found and kg's hooks will not run; put the folder of "
                              f"{kg_bin or kg_executable()} on PATH (for Claude Code too), or install without --shared")
        nxt = ["Put kg on PATH, then start Claude Code in this folder: the session begins with kg's brief."
               if off_path else "Start Claude Code in this folder: the session begins with kg's brief."]
        if mcp_argv:
            nxt.append("Claude Code asks once to trust the project's MCP server `kaizen-kg`.")
        if not shared:
            nxt.append(f"{plan.rel(path)} is personal (Claude Code keeps it out of git); `kg install claude-code "
                       "--shared` writes the team's .claude/settings.json instead, calling `kg` from PATH.")
    elif runtime == "openclaw":
        folder = root / HOOK_DIR
        _refuse_outside(folder / HOOK_MD, folder / HANDLER_JS)
        plan.write(folder / HOOK_MD, openclaw_hook_md(), "OpenClaw hook metadata and documentation", runtime,
                   keep_edited=True)
        plan.write(folder / HANDLER_JS, openclaw_handler(ws, kg_bin or kg_executable()),
                   "OpenClaw hook handler (runs `kg` detached)", runtime, keep_edited=True)
        nxt = [(f"Run `openclaw hooks enable {SERVER_NAME}` (OpenClaw finds hooks in <workspace>/hooks/), then "
                "restart the gateway."),
               "If the OpenClaw workspace is not this folder, install with --project <openclaw workspace>."]
    else:
        _refuse_outside(root / CODEX_HOOKS, root / CODEX_CONFIG, root / AGENTS_MD)
        _write_hooks(plan, root / CODEX_HOOKS, runtime, hook_entries(ws, runtime, kg_bin),
                     "hooks: SessionStart (brief), Stop (reflect, never exit 2), SessionEnd (reflect + summary)")
        plan.codex_config(root / CODEX_CONFIG, mcp_argv, runtime)
        plan.agents_block(root / AGENTS_MD, AGENTS_BODY.format(kg=_shell(_argv(ws, kg_bin))), runtime)
        nxt = [("Codex reads the project's .codex/ folder once the project is trusted; hooks run only once "
                "trusted: review and trust kg's with Codex's `/hooks` command."),
               "Older Codex versions without hooks follow the AGENTS.md block."]
    plan.save()
    return plan.result(runtime, nxt)


def _drop_claude_hooks(plan: _Plan, path: Path, runtime: str = "claude-code",
                       kept: dict[str, Any] | None = None) -> bool:
    """Take kg's hooks out of a settings file: its bytes from before kg when it is as kg left it, else kg's
    entries only. With `kept` (uninstall), an entry a person edited since kg wrote it stays, with a note, and what
    kg wrote there goes into `kept` for the next install. Whether there was anything of kg's to take out."""
    if plan.restore(runtime, path):
        (plan.record.get(runtime) or {}).pop(str(path), None)
        return True
    settings = plan.read_json(path)
    wrote = plan.wrote_hooks(runtime, path)
    edited = edited_hooks(settings, runtime, wrote, {}) if kept is not None and not plan.force else {}
    for name, what in edited.items():
        plan.notes.append(f"{plan.rel(path)}: kg's {name.split()[0]} hook was edited since kg wrote it ({what}): "
                          f"kept; remove it by hand, or run `{plan.again}`")
    if edited and kept is not None:
        kept[str(path)] = {"hooks": wrote}
    new, removed = strip_hooks(settings, runtime, frozenset(edited))
    if removed:
        plan.json_edit(path, new, f"removed {removed} kg hook(s)", existed=True)
    return bool(removed or edited)


def uninstall(ws: Any, runtime: str, dry_run: bool = False, *, project: str | Path | None = None,
              force: bool = False) -> dict[str, Any]:
    """Take out what install added. A file still as kg left it gets its bytes from before the install back; a
    file edited since loses only kg's part. A part of kg's a person edited (a hook entry, the OpenClaw handler, a
    marked block) is kept, with a note, unless `force`."""
    return _carried(lambda made: _uninstall(made, ws, runtime, dry_run, project, force))


def _uninstall(made: list[_Plan], ws: Any, runtime: str, dry_run: bool, project: str | Path | None,
               force: bool) -> dict[str, Any]:
    runtime = _check(runtime)
    root = _project(ws, project)
    again = _again("uninstall", runtime, project, "--force")
    plan = _Plan(ws, root, dry_run, force, again)
    made.append(plan)
    kept: dict[str, Any] = {}  # the settings files whose edited kg entries stay: what kg wrote there
    if runtime in ("claude-code", "codex"):
        paths = ([_claude_settings(root, False), _claude_settings(root, True)] if runtime == "claude-code"
                 else [root / CODEX_HOOKS])
        for path in paths:
            if path.exists():
                _drop_claude_hooks(plan, path, runtime, kept)
    if runtime == "claude-code":
        mcp = root / MCP_JSON
        if mcp.exists() and not plan.restore(runtime, mcp):
            config = plan.read_json(mcp)
            if SERVER_NAME in (config.get("mcpServers") or {}):
                plan.json_edit(mcp, strip_mcp(config), f"removed MCP server {SERVER_NAME!r}", existed=True)
    elif runtime == "openclaw":
        folder = root / HOOK_DIR
        md = folder / HOOK_MD
        if md.exists() and OPENCLAW_MARK not in md.read_text(encoding="utf-8"):
            raise UsageError(f"{plan.rel(md)} was not written by kg (its marker is gone); remove the folder by hand")
        for name in (HANDLER_JS, HOOK_MD):
            path = folder / name
            if not path.exists() or plan.restore(runtime, path):
                continue
            ours = openclaw_handler(ws, kg_executable()) if name == HANDLER_JS else openclaw_hook_md()
            if path.read_text(encoding="utf-8") == ours or force:
                plan.remove(path, "kg's OpenClaw hook" + ("" if path.read_text(encoding="utf-8") == ours
                                                          else ", edited since kg wrote it (--force)"))
            else:
                plan.notes.append(f"{plan.rel(path)} was edited since kg wrote it: kept; remove it by hand, or run "
                                  f"`{again}`")
    else:
        cfg = root / CODEX_CONFIG
        if cfg.exists() and plan.restore(runtime, cfg):
            plan.forget_blocks(cfg, codex_toml.NAMES)  # its bytes from before the install are back
        elif cfg.exists():
            plan.codex_config(cfg, None, None)
        agents = root / AGENTS_MD
        if agents.exists() and not plan.restore(runtime, agents):
            plan.agents_block(agents, None, None)
    plan.forget(runtime)
    if kept:
        plan.record[runtime] = kept
    plan.save()
    return plan.result(runtime, [])
