"""Installs made for another workspace's path (QA6 #2): a workspace copied or moved keeps the hooks and MCP entries
`kg install` wrote with `-w <the old path>`, so a copy's sessions log into the original and a moved one's hooks
find no workspace. `memory/.kg/installs.json` records what each install wrote; the path it was made for is read
from it (the `-w` argument in the text kg wrote), and `kg init` and
`kg doctor` say which runtimes to install again."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

RECORD = "installs.json"
# `-w PATH` in a hook's command (shell-quoted when it holds a space), `"-w", "PATH"` in an MCP entry's arguments
_W = re.compile(r"""(?<![\w-])-w(?:\s+(?:'([^']+)'|([^\s"'\\]+))|["']\s*,\s*["']([^"']+)["'])""")


def made_for(entry: dict[str, Any]) -> set[str]:
    """The workspace paths one runtime's record names: the `-w` arguments in what it wrote (none: a `--shared`
    install, which finds its workspace from the project folder)."""
    found: set[str] = set()
    for value in entry.values():
        text = value.get("after") if isinstance(value, dict) else None
        if isinstance(text, str):
            found.update(next(g for g in m.groups() if g) for m in _W.finditer(text))
    return found


def _entries(kg_dir: Path) -> dict[str, dict[str, Any]]:
    """installs.json's entries, runtime → {file: ...} (a record that is unreadable or of another shape: none)."""
    try:
        record = json.loads((kg_dir / RECORD).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    if not isinstance(record, dict):
        return {}
    return {runtime: entry for runtime, entry in record.items() if isinstance(entry, dict)}


def elsewhere(kg_dir: Path, root: Path) -> dict[str, str]:
    """Runtime → the other workspace path its recorded install points at (none: every install is this one's)."""
    out: dict[str, str] = {}
    for runtime, entry in sorted(_entries(kg_dir).items()):
        others = sorted(p for p in made_for(entry) if Path(p) != root)
        if others:
            out[runtime] = others[0]
    return out


def advice(found: dict[str, str]) -> str:
    """What `kg init` and `kg doctor` say of installs made for another path."""
    said = "; ".join(f"{runtime} (its hooks name {path})" for runtime, path in found.items())
    fix = " and ".join(f"`kg install {runtime}`" for runtime in found)
    return (f"installs made for another workspace's path (this one was copied or moved): {said}. Run {fix} here "
            "to point them at this workspace (until then a copy's sessions log into the original, a moved one's "
            "are lost)")


def recorded_files(kg_dir: Path) -> set[Path]:
    """Every file an install of this workspace recorded writing (installs.json, by absolute path: a `--project`
    install's too, which `integrations.install_files` of the workspace does not name)."""
    return {Path(path) for entry in _entries(kg_dir).values() for path in entry}


# -- installs whose hooks will not run (QA1 #3, #6) ---------------------------------------------------------------
def _commands(data: Any, runtime: str) -> list[tuple[str, str]]:
    """kg's hook commands in a runtime's JSON settings (Claude Code's settings, Codex's hooks.json: the handlers
    `hook_settings.kg_hooks` finds), and the command of kg's MCP server entry, each with what it is."""
    from kg.runtimes.hook_settings import kg_hooks

    found: list[tuple[str, str]] = []
    if isinstance(data, dict):
        found += [("kg's hooks will not run", h["hook"]["command"]) for h in kg_hooks(data, runtime).values()
                  if isinstance(h["hook"].get("command"), str)]
    from kg.runtimes.openclaw_hook import SERVER_NAME

    server = ((data.get("mcpServers") or {}) if isinstance(data, dict) else {}).get(SERVER_NAME)
    if isinstance(server, dict) and isinstance(server.get("command"), str):
        found.append(("kg's MCP server will not start", server["command"]))
    return found


def unfound(command: str) -> str | None:
    """The program `command` starts when this machine's PATH does not find it (a bare `kg` off PATH, a path
    gone), else None."""
    import os
    import shlex
    import shutil

    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return None
    if os.sep in program:
        return None if os.access(program, os.X_OK) else program
    return None if shutil.which(program) else program


def not_running(kg_dir: Path) -> list[str]:
    """What `kg doctor` says of recorded installs whose hooks will not run: a hook command this machine does not
    find (a `--shared` install's bare `kg` off PATH, a removed virtualenv) and Codex hooks turned off in the
    .codex/config.toml kg wrote into."""
    import tomllib

    from kg.runtimes.codex_toml import hooks_off

    out: list[str] = []
    for runtime, entry in sorted(_entries(kg_dir).items()):
        for name in sorted(entry):
            path = Path(name)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if path.suffix == ".json":
                try:
                    data = json.loads(text)
                except json.JSONDecodeError:
                    continue
                missing = {(what, p) for what, command in _commands(data, runtime) if (p := unfound(command))}
                for what, program in sorted(missing):
                    out.append(f"{runtime}: {path} calls `{program}`, which this machine does not find (not on "
                               f"PATH, or gone): {what}; put kg on PATH, or run `kg install {runtime}` again"
                               + (" (without --shared: it names this kg by its path)"
                                  if runtime == "claude-code" else ""))
            elif path.name == "config.toml" and runtime == "codex":
                try:
                    off = hooks_off(tomllib.loads(text))
                except tomllib.TOMLDecodeError:
                    continue
                if off:
                    out.append(f"codex: {path} turns Codex hooks off ({off}): kg's hooks will not run; set it "
                               "to true")
    return out
