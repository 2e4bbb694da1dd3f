"""The analyst's Python API refuses a bad output file as it refuses every other wrong argument: a ValueError (kg's
ArgumentError) naming the argument `out` (or `force`, `dialect`), not the command line's `--out`; it was the CLI's
UsageError, no ValueError, naming a flag a notebook never typed (`--out x.gif: name a .png ...`). The commands keep
their own words (`--out`, `--force`, `--dialect`). A real workspace, real files; nothing reads the graph before the
refusal but the export into a missing folder."""

from __future__ import annotations

import pytest

from kg.analysis import export as ke
from kg.core.errors import ArgumentError, UsageError
from kg.ingest.trail import export_trail


def _refused(call, said: str) -> str:
    with pytest.raises(ValueError) as caught:
        call()
    exc = caught.value
    assert isinstance(exc, ArgumentError) and isinstance(exc, UsageError), type(exc)
    assert said in str(exc) and "--out" not in str(exc) and "--force" not in str(exc), str(exc)
    return str(exc)


def test_a_bad_export_file_is_a_value_error_naming_out(ws, tmp_path):
    (tmp_path / "folder").mkdir()
    _refused(lambda: ke.export_graph(ws, "json", out=tmp_path / "folder"),
             f"out='{tmp_path / 'folder'}' is a folder; name a file, e.g. {tmp_path / 'folder' / 'graph.json'}")
    _refused(lambda: ke.export_graph(ws, "json", out=ws.kg_dir / "graph.kuzu"),
             f"out='{ws.kg_dir / 'graph.kuzu'}' is inside kg's own state")
    _refused(lambda: ke.export_graph(ws, "json", out=ws.root / ".git" / "x.json"), "is git's own")
    mine = tmp_path / "notes.json"
    mine.write_text("{}", encoding="utf-8")
    said = _refused(lambda: ke.export_graph(ws, "json", out=mine), f"out='{mine}' exists and is not a file kg exported")
    assert "Pass force=True to replace it" in said
    assert mine.read_text(encoding="utf-8") == "{}"
    _refused(lambda: ke.export_graph(ws, "json", dialect="neo4j"), "dialect is for fmt='cypher', not 'json'")
    _refused(lambda: ke.export_graph(ws, "cypher", dialect="mysql"), "unknown Cypher dialect 'mysql'")
    _refused(lambda: ke.export_graph(ws, "json", out=tmp_path / "nowhere" / "g.json"),
             f"cannot write {tmp_path / 'nowhere' / 'g.json'}: its folder does not exist")
    _refused(lambda: export_trail(ws, out=ws.kg_dir / "trail.json"), "is inside kg's own state")


def test_a_drawing_s_file_that_is_no_image_is_a_value_error_naming_out(ws, tmp_path, need):
    need("matplotlib")
    from kg.analysis import drawing as kd

    _refused(lambda: kd.show_subgraph(ws, out=tmp_path / "x.gif", types="lesson"),
             f"out='{tmp_path / 'x.gif'}': name a .png, .svg or .pdf file")
    _refused(lambda: kd.save(None, tmp_path / "x.txt"), f"out='{tmp_path / 'x.txt'}': name a .png, .svg or .pdf file")
    _refused(lambda: kd.save(None, tmp_path / "nowhere" / "x.png"), "its folder does not exist")


def test_the_commands_keep_their_own_words(run_kg, ws):
    mine = ws.root / "notes.json"
    mine.write_text("{}", encoding="utf-8")
    r = run_kg(["export", "graph", "--format", "json", "--out", str(mine)])
    assert r.exit_code == 2, r.stderr
    assert r.stderr.startswith(f"Error: --out {mine} exists and is not a file kg exported"), r.stderr
    assert "Pass --force to replace it" in r.stderr and "force=True" not in r.stderr
    r = run_kg(["export", "graph", "--format", "json", "--dialect", "neo4j"])
    assert (r.exit_code, r.stderr) == (2, "Error: --dialect is for --format cypher, not json\n")
