"""How the workspace is found lives in kg/workspace_root.py (kg/workspace.py was past the house's ~500 lines): the
command line asks it before a command runs (the clock zone, the hooks), and it imports none of the store, the
journal or the workspace API for that; `kg.find_root`, the public name, is the same function."""

from __future__ import annotations

import subprocess
import sys

import pytest

import kg
from kg.core.errors import NoWorkspace
from kg.workspace_root import MARKER, find_root


def test_finding_the_workspace_imports_no_store_journal_or_workspace_api():
    code = ("import sys, kg.workspace_root; "
            "print(sorted(m for m in ('kg.workspace', 'kg.store', 'kg.ingest.journal', 'kuzu') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_it_finds_the_nearest_workspace_above_and_says_how_to_make_one(tmp_path, monkeypatch):
    monkeypatch.delenv("KG_WORKSPACE", raising=False)
    (tmp_path / "ws" / MARKER).mkdir(parents=True)
    (tmp_path / "ws" / "src" / "deep").mkdir(parents=True)
    assert find_root(start=tmp_path / "ws" / "src" / "deep") == (tmp_path / "ws").resolve()
    assert kg.find_root is find_root
    with pytest.raises(NoWorkspace, match="run `kg init` here, or name one with --workspace/-w or KG_WORKSPACE"):
        find_root(start=tmp_path)
