"""Where an export may write, through the real CLI and the Python API alike (kg/workspace_out.py).

QA: `kg.analysis.export.export_graph(ws, "json", out="<ws>/memory/.kg/graph.kuzu")` replaced the graph with JSON
(every later command: "not a valid Kuzu database file"), `out="<ws>/MEMORY.md"` and `"<ws>/kg.toml"` replaced
those; `kg export graph -f json -o kg.toml` (also as memory/.kg/../../kg.toml) replaced the config, after which
every command exited 2, and `-o .claude/settings.local.json` the hooks `kg install` wrote; an export over a
person's own file replaced it silently; an empty memory/.kg/snapshots/ stayed behind every export and load.
"""

from __future__ import annotations

import pytest

import kg
import kg.analysis as ka
from kg.analysis import snapshot
from kg.analysis.export import export_graph


@pytest.fixture
def logged(ws, run_kg):
    assert run_kg(["log", "learning", "pin the versions", "--wait"]).exit_code == 0
    return ws


def _files(root, names):
    """Each file's bytes now (None: no file)."""
    return {name: (root / name).read_bytes() if (root / name).exists() else None for name in names}


@pytest.mark.parametrize("target", ["memory/.kg/graph.kuzu", "MEMORY.md", "kg.toml", "memory/.kg/../../kg.toml",
                                    ".git/config", ".claude/settings.local.json", ".codex/config.toml"])
def test_the_python_api_refuses_what_the_cli_refuses(logged, run_kg, target):
    ws = logged
    for name in ("kg.toml", ".git/config", ".claude/settings.local.json", ".codex/config.toml"):
        (ws.root / name).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / name).write_text("# the person's\n")
    # (the graph's bytes move as a snapshot checkpoints it: `kg status` below says it is still a graph)
    before = _files(ws.root, {"MEMORY.md", "kg.toml", target} - {"memory/.kg/graph.kuzu"})
    with pytest.raises(ValueError, match="^out='"):  # the argument's name, not the command's --out (a UsageError too)
        export_graph(ws, "json", out=ws.root / target)
    with ka.load(ws) as analysis, pytest.raises(kg.UsageError, match="^out='"):  # a notebook's Analysis too
        export_graph(analysis, "json", out=ws.root / target)
    assert _files(ws.root, before) == before
    assert run_kg("status").exit_code == 0  # the workspace still opens
    r = run_kg(["export", "graph", "-f", "json", "-o", target])  # and the command says the same, exit 2
    assert r.exit_code == 2 and r.stderr.startswith(f"Error: --out {ws.root / target} is "), r.stderr
    assert _files(ws.root, before) == before


@pytest.mark.parametrize("out, why", [
    ("memory.md", "an instruction file"), ("Kg.TOML", "the workspace's config"), ("Memory/graph.json", "memory folder"),
    ("MEMORY/.KG/graph.kuzu", "kg's own state"), (".GIT/config", "git's own"), (".Learnings/graph.json", ".learnings/"),
])
def test_a_kept_place_named_in_another_case_is_refused(logged, run_kg, out, why):
    """macOS and Windows file systems ignore case: `-o memory.md --force` there replaced MEMORY.md (`realpath` keeps
    the case it is given, so the guard compared `memory.md` with `MEMORY.md` and let it through)."""
    ws = logged
    before = {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file() and "graph.kuzu" not in p.name}
    r = run_kg(["export", "graph", "-f", "json", "-o", out, "--force"])
    assert r.exit_code == 2 and why in r.stderr, (out, r.stderr)
    after = {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file() and "graph.kuzu" not in p.name}
    assert {p for p in after if p not in before} <= {ws.root / "memory" / ".kg" / "exports.json"}  # nothing new
    assert {p: after[p] for p in before if p.suffix in (".md", ".toml", ".json") and p in after} == {
        p: b for p, b in before.items() if p.suffix in (".md", ".toml", ".json") and p in after}


@pytest.mark.parametrize("runtime, target", [("claude-code", ".claude/settings.local.json"),
                                             ("codex", ".codex/config.toml"), ("codex", ".codex/hooks.json"),
                                             ("openclaw", "hooks/kaizen-kg/handler.js")])
def test_an_export_never_replaces_what_kg_install_wrote(logged, run_kg, runtime, target):
    ws = logged
    assert run_kg(["install", runtime]).exit_code == 0
    before = (ws.root / target).read_bytes()
    (ws.root / "link.json").symlink_to(ws.root / target)  # nor through a link to it
    for out in (target, "link.json", f"memory/.kg/../../{target}"):
        r = run_kg(["export", "graph", "-f", "json", "-o", out, "--force"])  # --force is for a person's own file
        assert r.exit_code == 2 and "`kg install` writes" in r.stderr, r.stdout + r.stderr
    assert (ws.root / target).read_bytes() == before


def test_kg_toml_and_git_are_refused_however_named(logged, run_kg):
    ws = logged
    (ws.root / "kg.toml").write_text("[clock]\n")
    (ws.root / ".git").mkdir()
    (ws.root / ".git" / "config").write_text("[core]\n")
    (ws.root / "conf.toml").symlink_to(ws.root / "kg.toml")
    for out, why in (("kg.toml", "the workspace's config"), ("memory/.kg/../../kg.toml", "the workspace's config"),
                     ("conf.toml", "the workspace's config"), (".git/config", "git's own"),
                     (".git/new-file", "git's own")):
        r = run_kg(["export", "graph", "-f", "json", "-o", out, "--force"])
        assert r.exit_code == 2 and why in r.stderr, (out, r.stderr)
    assert (ws.root / "kg.toml").read_text() == "[clock]\n" and (ws.root / ".git" / "config").read_text() == "[core]\n"
    assert not (ws.root / ".git" / "new-file").exists()
    assert run_kg("status").exit_code == 0


def test_a_person_s_file_is_replaced_only_with_force_and_kg_s_own_export_again_without(logged, run_kg):
    ws = logged
    mine = ws.root / "graph.json"
    mine.write_text("my notes\n")
    r = run_kg(["export", "graph", "-f", "json", "-o", "graph.json"])
    assert r.exit_code == 2 and "exists and is not a file kg exported" in r.stderr and "--force" in r.stderr
    assert mine.read_text() == "my notes\n"
    assert run_kg(["export", "graph", "-f", "json", "-o", "graph.json", "--force"]).exit_code == 0
    first = mine.read_text()
    assert '"nodes"' in first
    assert run_kg(["export", "graph", "-f", "json", "-o", "graph.json"]).exit_code == 0  # kg's own: refreshed
    mine.write_text(first + "an edit\n")  # edited since kg wrote it: the person's now
    assert run_kg(["export", "graph", "-f", "json", "-o", "graph.json"]).exit_code == 2
    assert mine.read_text() == first + "an edit\n"
    # the Python API alike
    with pytest.raises(kg.UsageError, match="exists and is not a file kg exported"):
        export_graph(ws, "json", out=mine)
    assert export_graph(ws, "json", out=mine, force=True).out == str(mine)
    assert export_graph(ws, "json", out=mine).out == str(mine)  # kg's own export since
    assert run_kg(["export", "graph", "-f", "mermaid", "-o", "graph.json"]).exit_code == 0  # whatever wrote it


def test_the_other_exports_share_the_guard_in_python(logged, need):
    from kg.ingest.trail import export_trail

    ws = logged
    (ws.root / "kg.toml").write_text("[clock]\n")
    with pytest.raises(kg.UsageError, match="the workspace's config"):
        export_trail(ws, out=ws.root / "kg.toml")
    need("matplotlib")
    from kg.analysis.drawing import show_subgraph

    (ws.root / ".git").mkdir()
    with pytest.raises(kg.UsageError, match="git's own"):
        show_subgraph(ws, out=ws.root / ".git" / "graph.png", types="learning")
    assert (ws.root / "kg.toml").read_text() == "[clock]\n" and not (ws.root / ".git" / "graph.png").exists()


def test_no_empty_snapshots_folder_stays_behind(logged, run_kg, tmp_path):
    ws = logged
    folder = ws.kg_dir / snapshot.SNAPSHOTS
    assert run_kg(["export", "graph", "-f", "json", "-o", "g.json"]).exit_code == 0
    assert not folder.exists()
    ka.load(ws).close()
    assert not folder.exists()
    export_graph(ws, "json")
    assert not folder.exists()
    with snapshot.take(ws) as one:
        with snapshot.take(ws):
            pass
        assert folder.is_dir() and one.directory.exists()  # a living copy keeps its folder
    assert not folder.exists()
    own = tmp_path / "mine"
    with snapshot.take(ws, dest=own):  # a folder the caller named is theirs: kg removes neither it nor its parent
        pass
    assert own.is_dir() and own.parent.is_dir()


def test_a_worktree_s_git_file_and_a_linked_state_folder_are_refused_from_graph_data_too(logged, tmp_path):
    """No Workspace in hand (a `GraphData`): the workspace the file lies in is found from the path, and a
    memory/.kg kept elsewhere through a link is still kg's state."""
    ws = logged
    (ws.root / ".git").write_text("gitdir: /elsewhere/.git/worktrees/w\n")
    with snapshot.take(ws) as snap:
        data = snapshot.read(snap)
    elsewhere = tmp_path / "state"
    ws.kg_dir.rename(elsewhere)
    ws.kg_dir.symlink_to(elsewhere)
    for out, why in ((".git", "git's own"), ("memory/.kg/graph.kuzu", "kg's own state folder")):
        with pytest.raises(kg.UsageError, match=why):
            export_graph(data, "json", out=ws.root / out, force=True)
    assert (ws.root / ".git").read_text().startswith("gitdir:")
    graph = elsewhere / "graph.kuzu"  # the embedded graph, untouched; a team graph has none, and none was written
    assert graph.read_bytes()[:4] == b"KUZU" if graph.exists() else not any(elsewhere.glob("graph.kuzu*"))


def test_a_folder_is_refused_before_the_graph_is_read_by_every_export(logged, run_kg):
    """`check_out` returned a folder as is: `export_trail(ws, out=<folder>)` read the whole graph, then failed on a
    raw IsADirectoryError."""
    from kg.ingest.trail import export_trail

    ws = logged
    folder = ws.root / "out"
    folder.mkdir()
    with pytest.raises(kg.UsageError, match=r"is a folder; name a file, e\.g\. .*\.learning-trail\.json"):
        export_trail(ws, out=folder)
    with pytest.raises(kg.UsageError, match=r"is a folder; name a file, e\.g\. .*graph\.mmd"):
        export_graph(ws, "mermaid", out=folder)
    for args in (["export", "trail", "--out", "out"], ["export", "graph", "-f", "json", "-o", "out", "--force"]):
        r = run_kg(args)
        assert r.exit_code == 2 and "name a file" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert list(folder.iterdir()) == []


def test_any_git_folder_or_file_is_refused_not_only_the_workspace_s(logged, run_kg):
    """Only the workspace root's .git was kept: `-o vendor/lib/.git/config --force` replaced a nested repository's
    config, and a submodule's .git file could be replaced the same way."""
    ws = logged
    nested = ws.root / "vendor" / "lib" / ".git"
    nested.mkdir(parents=True)
    (nested / "config").write_text("[core]\n")
    (ws.root / "vendor" / "sub").mkdir()
    (ws.root / "vendor" / "sub" / ".git").write_text("gitdir: ../../.git/modules/sub\n")
    for out in ("vendor/lib/.git/config", "vendor/lib/.git/new-file", "vendor/sub/.git"):
        r = run_kg(["export", "graph", "-f", "json", "-o", out, "--force"])
        assert r.exit_code == 2 and "git's own" in r.stderr, (out, r.stderr)
        with pytest.raises(kg.UsageError, match="git's own"):
            export_graph(ws, "json", out=ws.root / out, force=True)
    assert (nested / "config").read_text() == "[core]\n" and not (nested / "new-file").exists()
    assert (ws.root / "vendor" / "sub" / ".git").read_text().startswith("gitdir:")
