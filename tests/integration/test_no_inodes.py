"""A file system with free bytes and no free inodes (a big node_modules or cache tree on ext4) said "the disk is
full; free some space" while `df` showed room (QA11 #9). It is said as what it is. A small tmpfs with few inodes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.embedded_only("the workspace's own file system")
KG = str(Path(sys.executable).parent / "kg")


def test_no_free_inodes_is_said_as_such(tmp_path):
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("needs root's mount to make a file system with few inodes")
    folder = tmp_path / "fs"
    folder.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m,nr_inodes=40", "tmpfs", str(folder)],
                      capture_output=True).returncode != 0:
        pytest.skip("root here cannot mount a tmpfs")
    try:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("KG_")}, "KG_SERVER": "0"}
        made = subprocess.run([KG, "init", str(folder / "ws")], capture_output=True, env=env, timeout=120)
        assert made.returncode == 0, made.stderr
        n = 0
        while True:
            try:
                (folder / f"f{n}").touch()
            except OSError:
                break
            n += 1
        r = subprocess.run([KG, "-w", str(folder / "ws"), "log", "learning", "no inodes"], capture_output=True,
                           text=True, env=env, timeout=120)
        assert r.returncode == 1 and "no free inodes left" in r.stderr and "df -i" in r.stderr, r.stderr
    finally:
        subprocess.run(["umount", str(folder)], check=True)
