"""What an agent gets back from its own memory, on real transcripts: this tree beside a baseline tree, same run.

Each transcript is reflected into a fresh workspace (`kg reflect --apply`, at a fixed --now after it), then,
as the agent would ask:
- **id**: `kg search ID` for every entry id: the share whose top hit is that entry;
- **recurring in inject**: for every error logged more than once (identical summaries), `kg inject -m` with
  the first words of its summary: the share of blocks holding it;
- **frame hits**: for every distinct error summary, `kg search` with its first three words: how many of the
  top 10 hits are a session summary's frame (its title, headings, "Generated:", "- (none)"), target 0.

The runtimes' transcripts in ../shared/data/runtimes were looked at while fixing (dev); the Claude Code
sessions in ../shared/data/transcripts/claude_code were not (held out), and are reported apart. The `-hook`
sets log the Claude Code sessions' failures as the live hook does (PostToolUseFailure payloads: medium
priority, so not on the watch list) instead of reflecting on them.

    .venv/bin/python bench/user_view.py [--baseline REV] [--only dev|held-out]

The baseline is `git archive REV` of kg/, cli/ and rules/ laid out as the installed package (kg, kg.cli,
kg.rules) in a temporary folder and imported ahead of this tree (PYTHONPATH) by the same Python.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("KG_SHARED_DATA", REPO.parent / "shared" / "data"))
RT = DATA / "runtimes"
SETS = {
    "dev": sorted((RT / "claude_code" / "transcripts").glob("*.jsonl"))
    + sorted((RT / "codex" / "transcripts").glob("*.jsonl"))
    + sorted((RT / "openclaw" / "transcripts").glob("*.jsonl"))
    + [RT / "aider" / "aquaticat_monochromatic" / ".aider.chat.history.md"],
    "held-out": sorted((DATA / "transcripts" / "claude_code").glob("*.jsonl*")),
    # the same Claude Code sessions as the live hook logs them (PostToolUseFailure, one call at a time)
    "dev-hook": sorted((RT / "claude_code" / "transcripts").glob("*.jsonl")),
    "held-out-hook": sorted((DATA / "transcripts" / "claude_code").glob("*.jsonl*")),
}
NOW = "2026-12-02T12:00:00"
FRAME = re.compile(r"^(#|Generated: |\(none\)$)")


def _live_hook(ws, path: Path) -> None:
    """Each failed call of a Claude Code transcript as its PostToolUseFailure hook payload, to kg's hook."""
    import gzip

    from kg.runtimes import hooks

    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    uses: dict[str, dict] = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        content = (row.get("message") or {}).get("content") if isinstance(row, dict) else None
        for b in content if isinstance(content, list) else []:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use":
                uses[b.get("id")] = b
            elif b.get("type") == "tool_result" and b.get("is_error"):
                use = uses.get(b.get("tool_use_id"), {})
                text = b.get("content")
                if isinstance(text, list):
                    text = "\n".join(x.get("text", "") for x in text if isinstance(x, dict))
                error = f"Exit code 1\n{text}" if use.get("name") == "Bash" else str(text or "")
                hooks.post_tool_use(ws, {"hook_event_name": "PostToolUseFailure", "session_id": path.stem,
                                         "tool_name": use.get("name"), "tool_input": use.get("input") or {},
                                         "tool_use_id": b.get("tool_use_id"), "error": error}, now=NOW)


def measure(paths: list[Path], hook: bool = False) -> dict[str, list[int]]:
    """[hits, asked] per measure over the transcripts, in this process's `kg`."""
    import kg
    from kg.memory import inject, search
    from kg.reflect.apply import reflect_file

    out = {"id": [0, 0], "recurring in inject": [0, 0], "frame hits": [0, 0]}
    for path in paths:
        if not path.exists():
            continue
        with tempfile.TemporaryDirectory(prefix="kg-user-view-") as tmp:
            ws = kg.init_workspace(Path(tmp) / "ws")
            try:
                if hook:
                    _live_hook(ws, path)
                else:
                    reflect_file(ws, str(path), apply=True, now=NOW)
            except Exception as exc:  # noqa: BLE001 - a transcript this tree cannot read is reported, not fatal
                print(f"  ({path.name}: {type(exc).__name__}: {exc})", file=sys.stderr)
                continue
            events = _entries(ws)
            for node_id, _ in events:
                hits = search.search(ws, node_id, now=NOW, limit=5)
                out["id"][1] += 1
                out["id"][0] += bool(hits) and hits[0].ref == node_id
            errors = Counter(text for _, text in events if text)
            for text, n in errors.items():
                if n < 2:
                    continue
                message = " ".join(text.split()[:6])
                block = inject.inject(ws, message, now=NOW)["block"]
                out["recurring in inject"][1] += 1
                out["recurring in inject"][0] += text[:60] in block
            for text in errors:
                query = " ".join(text.split()[:3])
                hits = search.search(ws, query, now=NOW, limit=10)
                out["frame hits"][1] += len(hits)
                out["frame hits"][0] += sum(1 for h in hits if h.source == "sessions" and FRAME.match(h.text or ""))
    return out


def _entries(ws) -> list[tuple[str, str]]:
    """(id, summary) of every logged error, from `kg list --json` (the public read)."""
    from kg.graph.reads import list_nodes

    return [(r["id"], r.get("text") or "") for r in list_nodes(ws, type="error", limit=100000)]


def baseline_tree(rev: str, into: Path) -> Path:
    """kg/, cli/ and rules/ of `rev` laid out as the installed package: into/kg, into/kg/cli, into/kg/rules."""
    archive = into / "src.tar"
    with archive.open("wb") as fh:
        subprocess.run(["git", "-C", str(REPO), "archive", rev, "kg", "cli", "rules"], stdout=fh, check=True)
    src = into / "src"
    with tarfile.open(archive) as tar:
        tar.extractall(src, filter="data")
    pkg = into / "pkg"
    shutil.copytree(src / "kg", pkg / "kg")
    shutil.copytree(src / "cli", pkg / "kg" / "cli")
    shutil.copytree(src / "rules", pkg / "kg" / "rules")
    return pkg


def run(python_path: Path | None, only: list[str]) -> dict[str, dict[str, list[int]]]:
    env = {**os.environ, "KG_SERVER": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("KG_NOW", None)
    env.pop("KG_WORKSPACE", None)
    if python_path is not None:
        env["PYTHONPATH"] = str(python_path)
    r = subprocess.run([sys.executable, __file__, "--child", *only], capture_output=True, text=True, env=env,
                       cwd=tempfile.gettempdir())
    if r.returncode != 0:
        raise SystemExit(f"{'baseline' if python_path else 'this tree'} failed:\n{r.stderr[-2000:]}")
    sys.stderr.write(r.stderr)
    return json.loads(r.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", default="main", help="a git revision (default: main); '' for none")
    ap.add_argument("--only", choices=sorted(SETS), action="append")
    ap.add_argument("--child", nargs="*")
    args = ap.parse_args()
    if args.child is not None:
        import kg

        print(f"(kg from {Path(kg.__file__).parent})", file=sys.stderr)
        print(json.dumps({name: measure(SETS[name], hook=name.endswith("-hook"))
                          for name in (args.child or sorted(SETS))}))
        return
    only = args.only or sorted(SETS)
    cols = {"this tree": run(None, only)}
    if args.baseline:
        with tempfile.TemporaryDirectory(prefix="kg-baseline-") as tmp:
            cols[f"baseline ({args.baseline})"] = run(baseline_tree(args.baseline, Path(tmp)), only)
    names = list(cols)
    print(f"{'set':<14} {'measure':<22}" + "".join(f"{n:>26}" for n in names))
    for s in only:
        for m in ("id", "recurring in inject", "frame hits"):
            cells = []
            for n in names:
                got, asked = cols[n][s][m]
                cells.append(f"{got}/{asked} ({got / asked:.0%})" if asked else "-")
            print(f"{s:<14} {m:<22}" + "".join(f"{c:>26}" for c in cells))


if __name__ == "__main__":
    main()
