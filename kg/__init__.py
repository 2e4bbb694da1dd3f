"""kaizen-kg: a learning memory for AI agents, kept in an embedded Kùzu graph.

    import kg
    ws = kg.open_workspace("path/to/workspace")   # or kg.init_workspace(...)
    ws.log("error", "git push failed: auth not configured", area="tooling", pattern_key="git.push.auth")
    ws.status()
"""

from kg.core.errors import KgError, NotFound, NoWorkspace, UsageError
from kg.workspace import LogResult, Workspace, find_root, init_workspace, open_workspace

__all__ = [
    "KgError", "NoWorkspace", "NotFound", "UsageError", "LogResult", "Workspace", "find_root",
    "init_workspace", "open_workspace",
]
__version__ = "0.1.0"
