"""A graph file Kùzu crashes on (QA #6: 200 KB of zeroes written into graph.kuzu at page 20). kuzu 0.11.3 ends the
process with a segmentation fault opening it, read-only too, so `kg status`, `kg doctor` and `kg doctor --repair`
all exited 139 saying nothing; the same zeroes in another build of the demo graph made it ask for memory until the
kernel killed it (23 GB). Now doctor asks a child process first, its memory capped (kg/store/probe.py), says the
file is damaged and what --repair brings back, and --repair starts a new graph; every other command refuses the
file with "Run `kg doctor`" once an open of it has crashed or doctor has found it. Each `kg` runs in a process of
its own (a crash in-process would end the test run), and no test lets a kg open the file uncapped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

KG = str(Path(sys.executable).with_name("kg"))


def kg_process(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KG, "-w", str(root), *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "KG_SERVER": "0"})


def damaged_demo(demo_built: tuple[Path, str], tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(demo_built[0], root, symlinks=True)
    with open(root / "memory" / ".kg" / "graph.kuzu", "r+b") as f:  # dd bs=4096 seek=20 conv=notrunc
        f.seek(20 * 4096)
        f.write(bytes(204800))
    return root


def graph_check(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    return next(c for c in json.loads(done.stdout)["checks"] if c["name"] == "graph")


def said_plainly(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "so the file is damaged. Run `kg doctor`" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


@pytest.mark.embedded_only("damages the Kùzu file")
def test_doctor_says_the_graph_crashes_kuzu_and_repair_starts_a_new_one(demo_built, tmp_path):
    root = damaged_demo(demo_built, tmp_path)
    kg_dir = root / "memory" / ".kg"
    done = kg_process(root, "doctor", "--dry-run", "--json")
    assert done.returncode == 1, (done.returncode, done.stderr)
    graph = graph_check(done)
    assert graph["status"] == "error" and "so the file is damaged" in graph["detail"], graph
    assert "Kùzu crashes reading it (SIG" in graph["detail"] or "Kùzu runs out of memory" in graph["detail"], graph
    assert "Run `kg doctor --repair`" in graph["detail"] and "node(s)" in graph["detail"], graph
    assert not list(kg_dir.glob("graph.kuzu.*-*"))  # --dry-run leaves no mark and moves no file aside

    done = kg_process(root, "doctor")
    assert done.returncode == 1 and "❌ graph: cannot open the graph" in done.stdout, (done.returncode, done.stderr)
    said_plainly(kg_process(root, "status"))  # doctor's mark: the next command does not crash first

    done = kg_process(root, "doctor", "--repair", "--json")
    assert done.returncode == 0, (done.returncode, done.stderr)
    graph = graph_check(done)
    assert graph["status"] == "repaired" and "rebuilt" in graph["detail"], graph
    assert list(kg_dir.glob("graph.kuzu.damaged-*")) and not list(kg_dir.glob("graph.opening-*"))
    done = kg_process(root, "status", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["nodes"], done.stderr


@pytest.mark.embedded_only("damages the Kùzu file")
def test_a_command_after_an_open_that_crashed_says_so(demo_built, tmp_path):
    """The mark an open that never returned leaves (its process gone): the next command asks a child and says the
    file is damaged; over a sound file the mark goes and the command runs."""
    root = damaged_demo(demo_built, tmp_path)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    mark = root / "memory" / ".kg" / f"graph.opening-{int(gone.stdout)}"
    mark.touch()
    for args in (["status"], ["list"], ["search", "deploy"]):
        said_plainly(kg_process(root, *args))
    assert mark.exists()  # it says so every time, until the file is repaired
    done = kg_process(root, "doctor", "--json")
    assert done.returncode == 1 and "so the file is damaged" in graph_check(done)["detail"], done.stderr

    sound = tmp_path / "sound"
    shutil.copytree(demo_built[0], sound, symlinks=True)
    mark = sound / "memory" / ".kg" / mark.name
    mark.touch()  # a kill -9 during an open
    done = kg_process(sound, "status", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["nodes"], done.stderr
    assert not mark.exists()


def test_a_mark_kept_by_a_reused_pid_goes_once_it_is_older_than_any_open(demo_built, tmp_path):
    """A mark whose pid a live process took over was never removed, and the open it stood for never asked
    about (rev11 #7): past any open's time it is a mark left behind, asked about once and gone."""
    from kg.store import probe

    sound = tmp_path / "sound"
    shutil.copytree(demo_built[0], sound, symlinks=True)
    mark = sound / "memory" / ".kg" / f"graph.opening-{os.getpid()}"  # a live process: this one
    mark.touch()
    old = mark.stat().st_mtime - probe.STALE - 60
    os.utime(mark, (old, old))
    done = kg_process(sound, "status", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["nodes"], done.stderr
    assert not mark.exists()
    fresh = sound / "memory" / ".kg" / f"graph.opening-{os.getpid()}"
    fresh.touch()  # a live process's open, now: left alone
    assert kg_process(sound, "status").returncode == 0 and fresh.exists()
    fresh.unlink()


@pytest.mark.embedded_only("mounts the Kùzu workspace read-only")
def test_a_mark_in_a_read_only_workspace_does_not_slow_every_command(demo_built, tmp_path):
    """A mark a read-only workspace holds (a copy of one left by a kill -9) cannot be removed: each command asked
    a child about the graph again, 0.2 s more on every command for good (rev11 #4). Such marks are not asked."""
    src = tmp_path / "src"
    shutil.copytree(demo_built[0], src, symlinks=True)
    (src / "memory" / ".kg" / "graph.opening-3999999").touch()  # no such process
    where = tmp_path / "ro"
    where.mkdir()
    made = subprocess.run(["mount", "--bind", "-o", "ro", str(src), str(where)], capture_output=True, text=True)
    if made.returncode:
        pytest.skip(f"no read-only bind mount here: {made.stderr.strip()}")
    try:
        from kg.store import probe

        assert probe.left_marks(where / "memory" / ".kg" / "graph.kuzu") == []
        done = kg_process(where, "list", "--json")
        assert done.returncode == 0, done.stderr
    finally:
        subprocess.run(["umount", "--lazy", str(where)], check=True)
