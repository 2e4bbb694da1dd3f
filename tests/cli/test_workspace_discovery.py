"""How `kg` finds its workspace, the way git finds `.git`: `-w` first, then KG_WORKSPACE, else the nearest folder
at or above the current directory that holds `memory/.kg/`. Through the real CLI."""

from __future__ import annotations

import json

from kg.cli.app import app
from typer.testing import CliRunner

import kg


class _R:
    def __init__(self, result):
        self.exit_code, self.stdout, self.stderr = result.exit_code, result.stdout, result.stderr

    @property
    def json(self):
        return json.loads(self.stdout)


def _kg(argv: list[str], env: dict[str, str] | None = None) -> _R:
    """The real app with no -w added (conftest's run_kg always names the test workspace)."""
    return _R(CliRunner().invoke(app, argv, env=env))


def _where(run_kg, monkeypatch, cwd, *args: str, env: dict[str, str] | None = None):
    monkeypatch.chdir(cwd)
    return _kg(["pref", "set", "probe", "here", "--json", *args], env=env)


def _probe(root) -> bool:
    path = root / "memory" / "preferences.json"
    return path.exists() and '"probe"' in path.read_text()


def test_found_from_a_subfolder(run_kg, ws, monkeypatch):
    deep = ws.root / "src" / "pkg"
    deep.mkdir(parents=True)
    r = _where(run_kg, monkeypatch, deep)
    assert r.exit_code == 0, r.stderr
    assert r.json["user_md"] == "USER.md" and _probe(ws.root)


def test_the_nearest_workspace_wins(run_kg, ws, monkeypatch):
    inner = kg.init_workspace(ws.root / "projects" / "inner")
    (inner.root / "docs").mkdir()
    assert _where(run_kg, monkeypatch, inner.root / "docs").exit_code == 0
    assert _probe(inner.root) and not _probe(ws.root)


def test_flag_beats_environment_beats_folder(run_kg, ws, tmp_path, monkeypatch):
    a = kg.init_workspace(tmp_path / "a")
    b = kg.init_workspace(tmp_path / "b")
    r = _where(run_kg, monkeypatch, ws.root, env={"KG_WORKSPACE": str(a.root)})
    assert r.exit_code == 0 and _probe(a.root) and not _probe(ws.root)
    monkeypatch.chdir(ws.root)
    r = _kg(["-w", str(b.root), "pref", "set", "probe", "here"], env={"KG_WORKSPACE": str(a.root)})
    assert r.exit_code == 0 and _probe(b.root)


def test_no_workspace_says_how_to_make_one(run_kg, tmp_path, monkeypatch):
    lone = tmp_path / "lone"
    lone.mkdir()
    r = _where(run_kg, monkeypatch, lone)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith(f"Error: no kg workspace at or above {lone.resolve()}: run `kg init` here")
    r = _where(run_kg, monkeypatch, lone, env={"KG_WORKSPACE": str(lone)})
    assert r.exit_code == 2
    assert r.stderr.startswith(f"Error: {lone.resolve()} is not a kg workspace: run `kg init {lone.resolve()}`")
    assert not (lone / "memory").exists()  # finding never creates one
    afile = lone / "notes.txt"  # a file named as the workspace: `kg init` there cannot help (QA2)
    afile.write_text("x")
    r = _where(run_kg, monkeypatch, lone, env={"KG_WORKSPACE": str(afile)})
    assert r.exit_code == 2 and r.stderr.startswith(f"Error: {afile.resolve()} is a file, not a kg workspace folder")


def test_the_global_options_also_after_the_subcommand(ws, tmp_path, monkeypatch):
    """`-w/--workspace` and `--rules` are global options, taken after the subcommand as `--now` is (a QA pass:
    `kg status -w .` failed "No such option: -w")."""
    lone = tmp_path / "lone"
    lone.mkdir()
    monkeypatch.chdir(lone)
    for flag in (["-w", str(ws.root)], ["--workspace", str(ws.root)], [f"--workspace={ws.root}"]):
        r = _kg(["status", "--json", *flag])
        assert r.exit_code == 0, (flag, r.stderr)
        assert r.json["workspace"] == str(ws.root)
    other = kg.init_workspace(tmp_path / "other")
    r = _kg(["-w", str(other.root), "pref", "set", "probe", "here", "-w", str(ws.root)])  # the later one, as click
    assert r.exit_code == 0 and _probe(ws.root) and not _probe(other.root)
    r = _kg(["status", "-w", str(ws.root), "--rules", str(lone / "none")])
    assert r.exit_code == 2 and r.stderr.startswith(f"Error: --rules {lone / 'none'} does not exist")
    r = _kg(["show", "-w", str(ws.root), "--", "-w"])  # after `--` it is the argument
    assert r.exit_code == 2 and r.stderr.startswith("Error: no node '-w'")


def test_the_console_entry_serves_the_workspace_named_after_the_subcommand(ws):
    """The console entry hands a read to the read server of the workspace the options name: with `-w` after the
    subcommand too, or a read run elsewhere would ask the server of the folder it runs in."""
    from kg.cli.entry import hoist_globals, served

    assert served(hoist_globals(["status", "-w", str(ws.root), "--json"])) == (True, str(ws.root))
    assert served(hoist_globals(["status", "--rules", "r"])) == (False, None)  # the server holds its own rules
