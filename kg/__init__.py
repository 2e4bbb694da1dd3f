"""kaizen-kg: a learning memory for AI agents, kept in an embedded Kùzu graph.

    import kg
    ws = kg.open_workspace("path/to/workspace")   # or kg.init_workspace(...)
    ws.log("error", "git push failed: auth not configured", area="tooling", pattern_key="git.push.auth")
    ws.status()
"""

from __future__ import annotations

from kg.core.errors import KgError, NotFound, NoWorkspace, UsageError

__all__ = [
    "KgError", "NoWorkspace", "NotFound", "UsageError", "LogResult", "Workspace", "find_root",
    "init_workspace", "open_workspace",
]
__version__ = "0.1.0"

_FROM_WORKSPACE = {"LogResult": "kg.workspace", "Workspace": "kg.workspace", "find_root": "kg.workspace_root",
                   "init_workspace": "kg.workspace_setup", "open_workspace": "kg.workspace"}


def __getattr__(name: str) -> object:
    """The workspace API, imported on first use: a `kg` process answered by the read server (kg/serve/) never
    needs it, and importing it costs a third of a bare command's start."""
    import importlib

    if name in _FROM_WORKSPACE:
        return getattr(importlib.import_module(_FROM_WORKSPACE[name]), name)
    try:
        return importlib.import_module(f"kg.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"kg.{name}":
            raise
        raise AttributeError(f"module 'kg' has no attribute {name!r}") from None
