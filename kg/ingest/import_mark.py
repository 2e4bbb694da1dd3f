"""The mark of an import under way (`memory/.kg/import.json`): written before an import's first write, removed after its
index is built (kg/ingest/importing.py). A mark left behind is an import that did not finish: the next open
rebuilds the index, `kg import trail` with no paths resumes it, and `kg status` and `kg doctor` say so."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

MARK = "import.json"


def mark_path(ws: Any) -> Path:
    return ws.kg_dir / MARK


def interrupted(ws: Any) -> list[str] | None:
    """The paths of an import that was interrupted, or None."""
    try:
        return list(json.loads(mark_path(ws).read_text(encoding="utf-8")).get("paths") or [])
    except FileNotFoundError:
        return None
    except (ValueError, AttributeError):
        return []


def mark_claim(ws: Any) -> Any:
    """The interrupted import's mark as read, for whose lifecycle it takes (kg/ingest/trail_lifecycle.py
    `Claim.of_mark`); None when it cannot be read."""
    try:
        mark = json.loads(mark_path(ws).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return mark if isinstance(mark, dict) else None


def mark_principles(ws: Any) -> list[str]:
    """The principles the interrupted import loaded to make `import` proposals of (kg/lifecycle/imported.py): the
    run that resumes it proposes those still without one (a kill between the load and the proposals left them
    free, and the resumed run, finding them loaded, proposed nothing)."""
    mark = mark_claim(ws)
    ids = mark.get("principles") if mark is not None else None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def loading_principles(ws: Any) -> set[str]:
    """The principles an unfinished import loaded to be proposed (its mark names them before they are loaded): not
    free while it is there, or a cycle between a kill and the rerun would render another workspace's principles once
    (the rerun proposes them, and the next cycle takes them out again)."""
    return set(mark_principles(ws)) if mark_path(ws).exists() else set()


def unfinished(ws: Any) -> dict[str, Any] | None:
    """The import the mark says did not finish (None when there is none): its files, whether its process still
    runs, and the command that resumes it (`kg import trail` with no paths takes the mark's). `kg status` and
    `kg doctor` say it: a killed import left the graph as it was before it (kg/store/rollback.py), and nothing
    else told the user that its entries are missing until it is run again."""
    import shlex

    try:
        mark = json.loads(mark_path(ws).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        mark = {}
    mark = mark if isinstance(mark, dict) else {}
    pid = mark.get("pid")
    from kg.store.lock import pid_alive

    try:
        running = isinstance(pid, int) and pid != os.getpid() and pid_alive(pid)
    except (OverflowError, ValueError):
        running = False
    paths = [str(p) for p in mark.get("paths") or []]
    return {"paths": paths, "started": mark.get("started"), "running": running,
            "resume": f"kg -w {shlex.quote(str(ws.root))} import trail"}


def unfinished_text(left: dict[str, Any]) -> str:
    """One line on an unfinished import, for `kg status` and `kg doctor`."""
    files = ", ".join(left["paths"][:3]) + (" ..." if len(left["paths"]) > 3 else "") or "its files"
    if left["running"]:
        return f"an import of {files} is running (memory/.kg/{MARK}); its entries appear when it ends"
    return (f"an import of {files} was interrupted (memory/.kg/{MARK}): some of its entries may be missing. "
            f"Run `{left['resume']}` to resume it")
