"""Where an export may write its file: the one guard of `kg export graph`, `kg export trail` and `kg graph show`,
on the command line and in Python alike.

The guard lived in the CLI (cli/common.py), so the Python API a notebook calls had none: QA's
`export_graph(ws, "json", out="<ws>/memory/.kg/graph.kuzu")` replaced the graph with JSON (every later command:
"not a valid Kuzu database file"), and `out="<ws>/MEMORY.md"` or `"<ws>/kg.toml"` replaced those. The CLI itself
let `-o kg.toml` (also as `memory/.kg/../../kg.toml`) replace the workspace's config, after which every command
exited 2, and `-o .claude/settings.local.json` replace the hooks `kg install` wrote.

An export never replaces (`kept_place`): kg's state (`memory/.kg`), kg.toml, anything under `.git/`, the files
agents read at start, kg's memory folder and `.learnings/`, and every file `kg install` writes
(kg.runtimes.integrations.install_files, and those installs.json records). Paths are compared with symlinks and
`..` resolved, for the workspace the export reads and for any workspace the file lies in.

`kg export graph` also replaces no other file that exists unless told to (`force`): a file it exported itself
and nobody changed since (`exports.json` in memory/.kg records what it wrote) is written again without asking, as
running the same export again is the usual way to refresh it and the file holds nothing kg cannot make again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kg.core.errors import ArgumentError, UnusableFile
from kg.core.files import STATE, workspace_of, write_atomic

RECORD = "exports.json"  # in memory/.kg: realpath → [inode, size, mtime_ns] of each file `kg export graph` wrote
# what agent runtimes read at start besides kg's targets and kg.doctor.INSTRUCTION_FILES (which holds CLAUDE.md):
# Gemini CLI, Cursor, Windsurf, Copilot, aider
READ_AT_START = ("GEMINI.md", ".cursorrules", ".windsurfrules", ".github/copilot-instructions.md", "CONVENTIONS.md")
CONFIG = "kg.toml"
HINT = "Name another file, such as graph.json or graph.mmd"


def refused(out: Any, said: str) -> ArgumentError:
    """An output file refused, said as the caller named it: `out='x.gif'` to Python (a ValueError, as every wrong
    argument of the analyst's functions), `--out x.gif` on the command line. `said` holds `{out}` where it goes."""
    return ArgumentError(said.replace("{out}", f"out={str(out)!r}"), cli=said.replace("{out}", f"--out {out}"))


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


def _same(a: Path, b: Path) -> bool:
    """One place, names compared without case: macOS and Windows file systems ignore it (`-o memory.md` there is
    MEMORY.md, and `realpath` keeps the case it was given), and nobody means another file by `Kg.toml`."""
    return str(a).casefold() == str(b).casefold()


def _inside(real: Path, folder: Path) -> bool:
    """`real` is `folder` or lies under it (case aside, as `_same`)."""
    return _same(real, folder) or any(_same(p, folder) for p in real.parents)


def source(workspace: Any) -> tuple[Any, Any]:
    """What an export of the analyst's API reads the graph from (a workspace opened once: this guard reads its
    kg.toml, the export its graph) and the Workspace its file is checked against (None for a `GraphData`)."""
    from kg.analysis import Analysis
    from kg.analysis.graphs import _workspace
    from kg.analysis.snapshot import GraphData

    if isinstance(workspace, Analysis):
        return workspace, workspace.ws
    if isinstance(workspace, GraphData):
        return workspace, None
    ws = _workspace(workspace)
    return ws, ws


def _roots(ws: Any, path: Path) -> list[tuple[Path, Any]]:
    """The workspaces `path` may belong to (root, and the Workspace when it is the exported one): the exported
    workspace, and the one holding the path as named and as resolved (an export of one workspace into another
    must not break that one either)."""
    roots: list[tuple[Path, Any]] = []
    if ws is not None and getattr(ws, "root", None) is not None:
        roots.append((Path(ws.root), ws))
    for found in (workspace_of(Path(os.path.abspath(path))), workspace_of(_real(path))):
        if found is not None and all(_real(found) != _real(r) for r, _ in roots):
            roots.append((found, None))
    return roots


def kept_place(real: Path, root: Path, ws: Any = None, *, trail: bool = False) -> str | None:
    """Why the resolved file `real` is a place of the workspace `root` that no export may write (None: it may be).
    `ws` (the workspace itself) adds the files its own kg.toml promotes into; `trail`: `kg export trail` may name
    its own file."""
    from kg.doctor import INSTRUCTION_FILES
    from kg.ingest.trail import TRAIL_FILE
    from kg.runtimes.install_paths import recorded_files
    from kg.runtimes.integrations import install_files

    kg_dir = Path(ws.kg_dir) if ws is not None else root / STATE
    state = _real(kg_dir)
    if _inside(real, state):  # first: a person may keep memory/.kg elsewhere through a link
        return f"inside kg's own state folder {kg_dir}"
    base = _real(root)
    if not _inside(real, base):
        return None
    if trail and _same(real, _real(root / TRAIL_FILE)):
        return None
    if _same(real, _real(root / CONFIG)):
        return "the workspace's config (kg.toml), which every kg command reads first"
    if _inside(real, base / ".git"):  # (a worktree's .git is a file)
        return "git's own (.git, or inside it)"
    kept = {*INSTRUCTION_FILES, *READ_AT_START}
    if ws is not None:
        from kg.lifecycle.api import instruction_files

        kept.update(instruction_files(ws))
    if any(_same(real, _real(root / name)) for name in kept):
        return "an instruction file agents read at start"
    installed = {p for files in install_files(root).values() for p in files} | recorded_files(kg_dir)
    if any(_same(real, _real(p)) for p in installed):
        return "a file `kg install` writes for an agent runtime (its hooks, MCP server or config)"
    if _inside(real, base / "memory") and not _same(real, base / "memory"):
        return "in kg's memory folder (daily logs, preferences, skills, topics)"
    if _inside(real, base / ".learnings") and not _same(real, base / ".learnings"):
        return "in .learnings/, which `kg export trail --learnings` keeps"
    return None


def _in_git(given: Path, real: Path) -> bool:
    """Whether the path, as named or resolved, has a `.git` component: any repository's (a vendored one's
    vendor/lib/.git/config as much as the workspace's), and a worktree's or submodule's .git file."""
    return any(part.casefold() == ".git" for part in (*Path(os.path.abspath(given)).parts, *real.parts))


def check_out(ws: Any, out: str | os.PathLike[str], *, trail: bool = False, example: str = "graph.json") -> Path:
    """`out` as an export writes it (a symlink: its target, the link stays), or ArgumentError when it is a place kg
    keeps (`kept_place`, for every workspace it may belong to), git's (`.git` anywhere in it), a folder, a device
    or a FIFO. `example` is the file name a refused folder is told to hold. Every refusal comes before the export
    reads the graph, which on a large workspace takes long and is all lost on a late failure."""
    from kg.core.paths import output_target

    given = Path(out).expanduser()
    real = _real(given)
    if _in_git(given, real):
        raise refused(out, "{out} is git's own (.git, or inside it): kg keeps that place for what agents and kg "
                      f"read, and an export there would replace or add to it. {HINT}")
    for root, own in _roots(ws, given):
        why = kept_place(real, root, own, trail=trail)
        if why is not None and why.startswith("inside kg's own state"):
            raise refused(out, f"{{out}} is {why}; choose another file")
        if why is not None:
            raise refused(out, f"{{out}} is {why}: kg keeps that place for what agents and kg read, and an export "
                          f"there would replace or add to it. {HINT}")
    if given.is_dir():  # (returned as is, the trail export read the whole graph, then failed on IsADirectoryError)
        raise refused(given, f"{{out}} is a folder; name a file, e.g. {given / example}")
    real = output_target(given, _kg_dir(ws, given) or real.parent / STATE)  # (its state was checked above)
    return real if given.is_symlink() else given


# -- what `kg export graph` wrote: written again without --force -------------------------------------------------
def _stamp(path: Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def _record(kg_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((kg_dir / RECORD).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _kg_dir(ws: Any, path: Path) -> Path | None:
    if ws is not None and getattr(ws, "kg_dir", None) is not None:
        return Path(ws.kg_dir)
    root = workspace_of(path)
    return root / STATE if root is not None else None


def check_replace(ws: Any, path: Path, *, force: bool) -> None:
    """Refuse (ArgumentError) to replace a file that exists and is not one `kg export graph` wrote and nobody changed
    since: a person's file of the same name (`graph.json`, `notes.md`, `.claude/settings.json`) is theirs."""
    stamp = _stamp(path)
    if force or stamp is None:
        return
    kg_dir = _kg_dir(ws, path)
    if kg_dir is not None and _record(kg_dir).get(str(_real(path))) == stamp:
        return
    said = ("{out} exists and is not a file kg exported (or it changed since kg wrote it): kg does not replace it "
            "unasked. Pass {force} to replace it, or name a new file")
    raise ArgumentError(said.replace("{out}", f"out={str(path)!r}").replace("{force}", "force=True"),
                        cli=said.replace("{out}", f"--out {path}").replace("{force}", "--force"))


def remember(ws: Any, path: Path) -> None:
    """Record the file just exported, so that the next export to it replaces it without --force. Best effort: a
    workspace kg cannot write (read-only) only costs a --force next time. Entries of files gone are dropped."""
    kg_dir = _kg_dir(ws, path)
    stamp = _stamp(path)
    if kg_dir is None or stamp is None or not kg_dir.is_dir():
        return
    record = {name: s for name, s in _record(kg_dir).items() if _stamp(Path(name)) == s}
    record[str(_real(path))] = stamp
    try:
        write_atomic(kg_dir / RECORD, (json.dumps(record, indent=1, sort_keys=True) + "\n").encode("utf-8"))
    except (OSError, UnusableFile):  # read-only, or a link out of memory/.kg: only a --force next time
        pass
