"""Where the workspace is: named by `--workspace`/`KG_WORKSPACE`, else the nearest folder at or above the current
directory that has `memory/.kg/` (as git finds `.git`). Light on purpose: the command line asks it before any
command runs (the clock zone, the hooks), and importing kg.workspace for it cost the store's and the drain's imports.
"""

from __future__ import annotations

import os
from pathlib import Path

from kg.core.errors import NoWorkspace, StoreError

ENV_WORKSPACE = "KG_WORKSPACE"
MARKER = Path("memory") / ".kg"


def find_root(explicit: str | os.PathLike[str] | None = None, *, start: Path | None = None) -> Path:
    """Resolve the workspace folder, or say how to make one."""
    try:
        return _find_root(explicit, start)
    except PermissionError as exc:
        raise StoreError(f"cannot read {exc.filename}: permission denied") from None


def _find_root(explicit: str | os.PathLike[str] | None, start: Path | None) -> Path:
    named = explicit or os.environ.get(ENV_WORKSPACE)
    if named:
        root = Path(named).expanduser().resolve()
        if root.exists() and not root.is_dir():  # a file: `kg init` there cannot work either
            raise NoWorkspace(f"{root} is a file, not a kg workspace folder: name the workspace's folder with "
                              "--workspace/-w (or KG_WORKSPACE)")
        if not (root / MARKER).is_dir():
            raise NoWorkspace(f"{root} is not a kg workspace: run `kg init {root}` to make one")
        return root
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / MARKER).is_dir():
            return folder
    raise NoWorkspace(
        f"no kg workspace at or above {here}: run `kg init` here, or name one with --workspace/-w or "
        f"{ENV_WORKSPACE}"
    )
