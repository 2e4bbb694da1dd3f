"""The kg commands an agent runtime calls, as kg installs them (`kg/runtimes/integrations.py`): the hook entries
in a runtime's hook settings and the `kaizen-kg` MCP server entry. Pure but for finding the `kg` script."""

from __future__ import annotations

import importlib.util
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from kg.core.errors import UsageError
from kg.runtimes.openclaw_hook import SERVER_NAME


# -- the kg command the runtimes call -------------------------------------------------------------------------
def kg_executable() -> str:
    """The `kg` script of this installation (beside the running Python), else the one on PATH, else `kg`."""
    here = Path(sys.executable).parent / "kg"
    if here.exists():
        return str(here)
    return shutil.which("kg") or "kg"


def _argv(ws: Any, kg_bin: str | None, *args: str, shared: bool = False) -> list[str]:
    if shared:  # a file the team commits: `kg` from PATH, the workspace found from the project folder
        return ["kg", *args]
    return [kg_bin or kg_executable(), "-w", str(ws.root), *args]


def mcp_available() -> bool:
    """Whether `kg mcp` can start here: the optional `mcp` package imports."""
    return importlib.util.find_spec("mcp") is not None


MCP_MISSING = ("MCP server not registered: `kg mcp` needs the `mcp` package (pip install 'kaizen-kg[mcp]'); "
               "install it, then run this install again")


def _shell(argv: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)


# -- JSON settings merging (pure) ------------------------------------------------------------------------------
def hook_entries(ws: Any, runtime: str, kg_bin: str | None = None, *,
                 shared: bool = False) -> dict[str, list[dict[str, Any]]]:
    """The hook groups kg adds, by event, in Claude Code's settings schema (Codex's hooks.json is the same)."""
    start = _shell(_argv(ws, kg_bin, "hook", "session-start", "--start-session", "--runtime", runtime,
                         shared=shared))
    tool = _shell(_argv(ws, kg_bin, "hook", "post-tool-use", "--runtime", runtime, shared=shared))

    def group(matcher: str | None, command: str, timeout: int) -> dict[str, Any]:
        g: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        g["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
        return g

    if runtime == "claude-code":
        end = _shell(_argv(ws, kg_bin, "hook", "session-end", "--runtime", runtime, shared=shared))
        return {
            "SessionStart": [group("startup|resume|clear|compact", start, 30)],
            "SessionEnd": [group(None, end, 120)],
            "PostToolUseFailure": [group("*", tool, 30)],
        }
    if runtime == "codex":
        # Stop (end of each turn) reflects on the rollout so far, past its cursor; it never exits 2 (bad input exits
        # 1: Codex ignores a failed Stop hook). SessionEnd (1 s budget) answers at once and reflects + summarises in
        # a detached child.
        turn = _shell(_argv(ws, kg_bin, "hook", "session-end", "--no-summary", "--runtime", runtime))
        end = _shell(_argv(ws, kg_bin, "hook", "session-end", "--runtime", runtime))
        return {
            "SessionStart": [group("startup|resume|clear|compact", start, 30)],
            "Stop": [group(None, turn, 120)],
            "SessionEnd": [group(None, end, 3)],
        }
    raise UsageError(f"no hook settings for runtime {runtime!r}")


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
