"""The leave-one-set-out bench (bench/reflect_loso.py) takes every labelled set whose files are here (a set outside
shared data whose files were fetched again in part, on the files that are here), and never a set labelled blind and
not yet scored (NEVER, bench/reflect_heldout.py UNREAD), even once SETS names it; asked for one by name, or for a set
it does not know, it refuses with exit 2."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numpy")
BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def loso():
    sys.path.insert(0, str(BENCH))  # the bench's own imports are bench-relative
    try:
        spec = importlib.util.spec_from_file_location("reflect_loso_under_test", BENCH / "reflect_loso.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCH))


def _set(tmp_path: Path, name: str, files: list[str]) -> Path:
    path = tmp_path / f"labels_{name}.jsonl"
    path.write_text("".join(json.dumps({"file": f, "line": 1, "sha1": "0" * 40, "labels": []}) + "\n"
                            for f in files), encoding="utf-8")
    return path


def test_a_set_is_taken_on_the_files_that_are_here_and_never_the_blind_one(loso, tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "a.md").write_text("_**User**_\n\nhello\n", encoding="utf-8")
    with monkeypatch.context() as m:
        m.setattr(loso.rh, "SETS", {"p90": _set(tmp_path, "p90", ["a.md"]),
                                    "p91": _set(tmp_path, "p91", ["a.md", "b.md"]),
                                    "p92": _set(tmp_path, "p92", ["c.md"]),
                                    "p35": _set(tmp_path, "p35", ["a.md"]),
                                    "p36": _set(tmp_path, "p36", ["a.md"])})
        m.setattr(loso.rh, "OUTSIDE", {"p90": raw, "p91": raw, "p92": raw, "p35": raw, "p36": raw})
        # p91 lacks b.md: read on a.md; p92 has none of its files; p35 was scored: development data
        assert loso.available() == ["p35", "p36", "p90", "p91"]
        m.setattr(loso, "NEVER", {"p36"})
        assert loso.available() == ["p35", "p90", "p91"]  # a set in NEVER is never taken


def test_p35_is_development_data_now(loso):
    assert "p35" not in loso.NEVER


def test_asking_for_an_unknown_set_is_a_usage_error():
    res = subprocess.run([sys.executable, str(BENCH / "reflect_loso.py"), "--sets", "p99", "--baseline", ""],
                         capture_output=True, text=True, cwd=BENCH.parent)
    assert res.returncode == 2
    assert res.stderr.startswith("Error: p99: not a development set here; --sets takes some of ")
    assert "Traceback" not in res.stderr
