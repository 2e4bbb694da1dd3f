"""Which module of kg writes which file: a session of real `kg` commands (every command that writes a file, a
promotion into USER.md and into a skill file included) run in this process under an audit hook
(`sys.addaudithook`), which records each file opened for writing, renamed into place or removed, and the kg
module that asked for it. (Kùzu's own files are written by its C++ library, below the hook: kg/store opens them.)

    python tests/integration/file_owners.py [--json]      # the table: file → module(s) that write it

`kg.core.files` (write_atomic, atomic_writer) and the block editor's `apply` only carry a write out: the
module that called them is the writer. Run by tests/integration/test_file_owners.py, which checks that each
file has one writer (a person's file holding kg's marked blocks may have one per block, every write carried
out by the block editor) and that docs/architecture.md's table names them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("KG_SHARED_DATA") or REPO.parent / "shared" / "data") / "runtimes"  # as tests/conftest.py
KG_DIRS = (str(REPO / "kg") + os.sep, str(REPO / "cli") + os.sep)
CARRIERS = {("kg/core/files.py", "*"),  # write_atomic, atomic_writer: they carry a write out for their caller
            ("kg/lifecycle/blocks.py", "apply"), ("kg/lifecycle/blocks.py", "write_block"),
            ("kg/lifecycle/blocks.py", "sync_block"), ("kg/lifecycle/blocks.py", "<lambda>")}
EDITOR = ("kg/lifecycle/blocks.py", "apply")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_TMP = re.compile(r"^\..+\.\d+\.\d+\.tmp$")

writes: dict[str, set[str]] = defaultdict(set)        # file → writer modules
edited: dict[str, list[bool]] = defaultdict(list)     # file → for each write, whether the block editor carried it
_roots: list[tuple[Path, str]] = []
_active = [False]


def _module_of(filename: str) -> str | None:
    for base in KG_DIRS:
        if filename.startswith(base):
            rel = Path(filename).relative_to(REPO).as_posix()
            return rel
    return None


def _callers() -> list[tuple[str, str]]:
    out = []
    frame = sys._getframe(2)
    while frame is not None:
        mod = _module_of(frame.f_code.co_filename)
        if mod is not None:
            out.append((mod, frame.f_code.co_name))
        frame = frame.f_back
    return out


def _carrier(mod: str, func: str) -> bool:
    return (mod, "*") in CARRIERS or (mod, func) in CARRIERS


def _name(path: str | bytes | os.PathLike[str] | int) -> str | None:
    if isinstance(path, int):
        return None
    p = Path(os.fsdecode(path))
    if not p.is_absolute():
        p = Path.cwd() / p
    for root, label in _roots:
        try:
            rel = p.relative_to(root)
        except ValueError:
            continue
        if _TMP.match(rel.name) or rel.name.endswith(".tmp"):
            return None  # a temporary file, renamed into place (recorded then)
        return normalise(label + rel.as_posix())
    return None


def normalise(rel: str) -> str:
    """Names that vary (dates, ids, slugs, session ids) as patterns."""
    rel = re.sub(r"\d{4}-\d{2}-\d{2}", "YYYY-MM-DD", rel)
    rel = re.sub(r"^(memory/(?:sessions|skills|topics))/[^/]+$", r"\1/*", rel)
    rel = re.sub(r"draining-[^/]+\.jsonl$", "draining-*.jsonl", rel)
    rel = re.sub(r"draining\.[0-9a-z]+-[^/]+\.jsonl$", "draining.<lane>-*.jsonl", rel)  # another store's lane
    rel = re.sub(r"journal\.[0-9a-z]+\.jsonl$", "journal.<lane>.jsonl", rel)
    rel = re.sub(r"applier\.[0-9a-z]+\.lock$", "applier.<lane>.lock", rel)
    rel = re.sub(r"^memory/\.kg/graph\.kuzu.*", "memory/.kg/graph.kuzu*", rel)
    rel = re.sub(r"graph\.opening-[^/]+$", "graph.opening-*", rel)  # an open's mark: its pid (kg/store/probe.py)
    rel = re.sub(r"^memory/\.kg/snapshots/[^/]+/", "memory/.kg/snapshots/*/", rel)
    rel = re.sub(r"^(memory/\.kg/\.(?:bulk-[^/]*|import-(?:edges|implied|lifecycle)))-\d+(\.jsonl?)$", r"\1-PID\2", rel)
    rel = re.sub(r"^(~/\.cache/kg/\.secret-rules)-[^/]+$", r"\1-*", rel)
    return rel


def _record(path: str | bytes | os.PathLike[str] | int) -> None:
    name = _name(path)
    if name is None:
        return
    chain = _callers()
    writer = next((mod for mod, func in chain if not _carrier(mod, func)), None)
    if writer is None or name.startswith("~/.cache/matplotlib/"):
        return  # matplotlib's own font cache
    writes[name].add(writer)
    edited[name].append(EDITOR in chain)


def _hook(event: str, args: tuple) -> None:
    if not _active[0]:
        return
    if event == "open":
        path, mode, flags = args
        if isinstance(mode, str) and any(c in mode for c in "wax+"):
            _record(path)
        elif mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS:
            _record(path)
    elif event == "os.rename":
        _record(args[1])
    elif event == "os.remove":
        _record(args[0])
    elif event == "shutil.copyfile":
        _record(args[1])


def session(base: Path) -> None:
    """Every command that writes a file, on a fresh workspace."""
    from kg.cli.app import run

    ws = base / "ws"
    home = base / "home"
    home.mkdir()
    os.environ.update({"HOME": str(home), "KG_SERVER": "0", "KG_CRONTAB": str(home / "crontab"),
                       "KG_SYSTEMD_DIR": str(home / "units"), "CODEX_HOME": str(home / ".codex")})
    _roots[:] = [(ws, ""), (home, "~/")]

    def quiet(argv: list[str], stdin: str = "") -> str:
        out, err = io.StringIO(), io.StringIO()
        saved = sys.stdin
        sys.stdin = io.StringIO(stdin)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = run(argv)
        finally:
            sys.stdin = saved
        if code != 0:
            raise SystemExit(f"kg {' '.join(argv)} exited {code}: {err.getvalue()}")
        return out.getvalue()

    def kg(*argv: str, ok: tuple[int, ...] = (0,), stdin: str = "") -> None:
        try:
            quiet(["-w", str(ws), *argv], stdin)
        except SystemExit as exc:
            if not any(f"exited {c}:" in str(exc) for c in ok):
                raise

    _active[0] = True
    quiet(["init", str(ws)])
    (ws / ".learnings").mkdir(exist_ok=True)
    (ws / "USER.md").write_text("# User\n\nName: Ada\n")  # the person's file
    now = "--now=2026-12-01T10:00"
    kg("log", "error", "the build box ran out of disk", "--pattern-key", "disk.full", now)
    (base / "entries.jsonl").write_text('{"kind": "learning", "summary": "cache the wheels"}\n')
    kg("ingest", str(base / "entries.jsonl"), now)
    kg("pref", "set", "tone", "dry", now)
    kg("skill", "new", "release-steps", "--step", "tag the commit", now)
    kg("skill", "update", "release-steps", "--step", "push the tag", now)
    kg("session", "start", now)
    kg("score", "4", now, ok=(0, 2))
    kg("session", "end", now)
    kg("index", "build", now)
    for day in range(21):  # a procedure that recurs: promoted into a skill file, which `kg skill update` keeps
        kg("log", "learning", "rolled back by hand again", "--tags", "procedure", "--pattern-key", "deploy.rollback",
           "--action", "Roll back with the previous image tag", "--session", f"r{day % 2}",
           f"--now=2026-12-{day + 2:02d}T10:00")
        kg("log", "learning", "user wants metric units", "--category", "preference", "--pattern-key", "units.metric",
           "--action", "Use metric units in every answer", "--session", f"r{day % 2}",
           f"--now=2026-12-{day + 2:02d}T11:00")
    kg("cycle", "--future", "--now=2026-12-23T10:00")
    for proposal in json.loads(quiet(["-w", str(ws), "propose", "--json"])):
        kg("approve", str(proposal["number"]), "--now=2026-12-23T10:00", "--future", ok=(0, 1, 2))
    kg("skill", "update", "deploy-rollback", "--step", "docker pull the previous tag", now, ok=(0, 2))
    kg("export", "trail", "--learnings", now)
    kg("export", "memory", now, ok=(0, 1))
    kg("export", "graph", "--format", "graphml", "--out", str(ws / "graph.graphml"))
    kg("graph", "show", "--type", "pattern", "--out", str(ws / "graph.png"), ok=(0, 1, 2))
    kg("install", "claude-code")
    kg("install", "codex")
    kg("uninstall", "codex")
    kg("schedule", "install")
    kg("schedule", "run", now)
    kg("hook", "session-start", ok=(0, 1))
    transcript = min((DATA / "claude_code" / "transcripts").glob("*.jsonl"), key=lambda p: p.stat().st_size)
    kg("reflect", str(transcript), "--apply", now)
    kg("import", "trail", str(ws / "memory" / ".learning-trail.json"))
    kg("doctor", ok=(0, 1))
    _active[0] = False


def table() -> dict[str, dict[str, object]]:
    """file → its writer modules, and whether every write to it was carried out by the block editor (a person's
    file in which several modules may each keep one marked block)."""
    return {name: {"writers": sorted(writes[name]), "block_editor": all(edited[name])} for name in sorted(writes)}


def main() -> None:
    sys.addaudithook(_hook)
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            session(Path(tmp))
        finally:
            os.chdir(cwd)
    result = table()
    if "--json" in sys.argv:
        print(json.dumps(result, indent=1))
        return
    for name, who in result.items():
        extra = "   (through the block editor)" if who["block_editor"] else ""
        print(f"{name:48} {', '.join(who['writers'])}{extra}")


if __name__ == "__main__":
    main()
