"""`kg graph show --out g.png` wrote matplotlib's font list under ~/.cache/matplotlib and made ~/.config/matplotlib:
kg writes nothing outside the workspace unless told to. Where the user has no matplotlib folder of their own, the
drawing keeps them in the workspace's cache folder; where they have one, matplotlib's own is used as before. A
`kg` process of its own (the test process imported matplotlib already)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

KG = str(Path(sys.executable).with_name("kg"))


def _draw(ws, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MPLCONFIGDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")}
    return subprocess.run([KG, "-w", str(ws.root), "graph", "show", "--type", "pattern,learning", "--out",
                           str(ws.root / "g.png")], capture_output=True, text=True, timeout=300,
                          env={**env, "HOME": str(home), "KG_SERVER": "0"})


@pytest.mark.parametrize("own", [False, True], ids=["no-matplotlib-folder", "the-users-own"])
def test_a_drawing_writes_nothing_in_the_home_folder_but_matplotlibs_own(ws, tmp_path, own):
    pytest.importorskip("matplotlib")
    ws.log("learning", "pin the base image digest", pattern_key="docker.pin", wait=True)
    home = tmp_path / "home"
    (home / ".config" / "matplotlib").mkdir(parents=True) if own else home.mkdir()
    drawn = _draw(ws, home)
    assert drawn.returncode == 0, drawn.stderr
    assert (ws.root / "g.png").stat().st_size > 0
    made = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    if own:  # matplotlib's own folders, as the user has them
        assert not (ws.kg_dir / "cache" / "matplotlib").exists() and ".config/matplotlib" in made, made
    else:
        assert made == [], made
        assert (ws.kg_dir / "cache" / "matplotlib").is_dir()
