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
            check_marker(root)
            raise NoWorkspace(f"{root} is not a kg workspace: run `kg init {root}` to make one")
        return check_path(root)
    try:
        here = (start or Path.cwd()).resolve()
    except FileNotFoundError:  # (QA11 #7: it said a bare "No such file or directory")
        raise NoWorkspace("the current directory no longer exists (removed while this shell stood in it): cd to a "
                          f"folder that exists, or name the workspace with --workspace/-w or {ENV_WORKSPACE}") from None
    for folder in (here, *here.parents):
        if (folder / MARKER).is_dir():
            return check_path(folder)
        check_marker(folder)
    raise NoWorkspace(
        f"no kg workspace at or above {here}: run `kg init` here, or name one with --workspace/-w or "
        f"{ENV_WORKSPACE}"
    )


def check_marker(root: Path) -> None:
    """A `memory/.kg` that is not a folder (a sync tool's conflict copy, a bad restore) is said as such: it was "not
    a kg workspace: run `kg init`", and `kg init` then failed "File exists" (QA11 #7)."""
    marker = root / MARKER
    if marker.exists() and not marker.is_dir() or marker.is_symlink() and not marker.exists():
        raise NoWorkspace(f"{marker} is not a folder (a file, or a link to nothing): kg keeps its graph there; move "
                          f"it aside (`mv {marker} {marker}.aside`) and run `kg init {root}`, or restore the folder")


def check_path(root: Path) -> Path:
    """A workspace whose path is not UTF-8 text (a folder named in another encoding: old archives, zip files) is
    refused before anything is written: Kùzu takes only text paths, so `kg init` failed with a binding's TypeError
    after making memory/.kg/, and `kg log` then acknowledged entries that no graph could ever take (QA11 #4)."""
    try:
        str(root).encode("utf-8")
    except UnicodeEncodeError:
        raise NoWorkspace(f"the workspace's path {os.fsencode(root)!r} is not UTF-8 text (a folder named in another "
                          "encoding), and the graph cannot be opened there: rename the folder (e.g. `convmv -f "
                          "latin1 -t utf8 --notest NAME`)") from None
    return root
