"""Workspaces whose folder a user's machine made odd (QA11 #4, #7), through the real console entry."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

KG = os.fsencode(Path(sys.executable).parent / "kg")


def _kg(cwd: bytes | Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run([KG, *(a.encode() for a in args)], cwd=cwd, capture_output=True, timeout=300,
                       env={**os.environ, "KG_SERVER": "0", **(env or {})})
    r.stdout, r.stderr = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    return r


def test_a_folder_named_in_another_encoding_is_refused_before_anything_is_written(tmp_path):
    """`kg init` in a Latin-1 named folder failed with a binding's TypeError ("please report") after making
    memory/.kg/, and `kg log` then acknowledged entries no graph could ever take."""
    folder = os.fsencode(tmp_path) + b"/caf\xe9"
    os.mkdir(folder)
    r = _kg(folder, "init", ".")
    assert r.returncode == 2 and "is not UTF-8 text" in r.stderr and "rename the folder" in r.stderr, r.stderr
    assert os.listdir(folder) == []
    assert _kg(folder, "log", "learning", "never acknowledged").returncode == 2


def test_a_workspace_moved_under_such_a_name_says_so(tmp_path):
    made = _kg(tmp_path, "init", "ws")
    assert made.returncode == 0, made.stderr
    moved = os.fsencode(tmp_path) + b"/w\xe9s"
    os.rename(tmp_path / "ws", moved)
    r = _kg(moved, "log", "learning", "not acknowledged")
    assert r.returncode == 2 and "is not UTF-8 text" in r.stderr, r.stderr


def test_a_marker_that_is_a_file_is_named(tmp_path):
    """`memory/.kg` a file (a sync tool's conflict copy): "not a kg workspace: run kg init", then kg init "File
    exists": a circle."""
    (tmp_path / "ws" / "memory").mkdir(parents=True)
    (tmp_path / "ws" / "memory" / ".kg").write_text("a conflict copy")
    for cwd, args in ((tmp_path, ("-w", "ws", "status")), (tmp_path, ("init", "ws")), (tmp_path / "ws", ("status",))):
        r = _kg(cwd, *args)
        assert r.returncode == 2 and "memory/.kg is not a folder" in r.stderr and "move it aside" in r.stderr, r.stderr


def test_a_current_directory_removed_is_said_as_such(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    script = "import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); os.execv(sys.argv[2], sys.argv[2:])"
    r = subprocess.run([sys.executable, "-c", script, str(gone), KG.decode(), "status"], capture_output=True,
                       text=True, timeout=300, env={**os.environ, "KG_SERVER": "0"})
    assert r.returncode == 2 and "the current directory no longer exists" in r.stderr, r.stderr


def test_a_folder_in_place_of_a_file_kg_keeps_is_named_and_never_drained(tmp_path):
    """(QA11 #11) A folder where kg keeps a file (a sync tool's, a script's `mkdir -p`): bare "Is a directory"
    errors; a folder `journal.jsonl` was renamed into the drain, after which every read failed for good."""
    assert _kg(tmp_path, "init", "ws").returncode == 0
    assert _kg(tmp_path, "-w", "ws", "log", "learning", "before the folder", "--wait").returncode == 0
    kg_dir = tmp_path / "ws" / "memory" / ".kg"
    for name in ("journal.jsonl", "graph.lock"):
        (kg_dir / name).unlink(missing_ok=True)
        (kg_dir / name / "sub").mkdir(parents=True)
        for args in (("log", "learning", "x"), ("status",)):
            r = _kg(tmp_path, "-w", "ws", *args)
            if r.returncode or args == ("status",):
                assert f"{name} is a folder where kg keeps a file; move it aside" in r.stderr, (name, args, r.stderr)
        assert not list(kg_dir.glob("draining*")) or name != "journal.jsonl"
        os.rename(kg_dir / name, tmp_path / f"{name}.aside")
        r = _kg(tmp_path, "-w", "ws", "list")
        assert r.returncode == 0 and "before the folder" in r.stdout, r.stderr
