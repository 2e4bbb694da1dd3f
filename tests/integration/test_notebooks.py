"""The notebooks run headless, without errors, and draw their figures (CI runs them with nbclient here, and
`pytest --nbmake notebooks/` runs them too)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
# Each notebook and the least number of figures it must draw.
EXPECTED = {"explore.ipynb": 5, "transcripts.ipynb": 3}
# What an analyst must not be shown: failure kinds named by an exit code, or a call the user declined counted
# as a failure (kg's own detection, rules/errors.toml, does neither); the demo's one `contradicts` edge (a rule
# against an entry) said to wait for a `kg cycle` that never settles it (only conflicts between two rules).
MISLEADING = {"transcripts.ipynb": ("exit-", ".exit_code", "rejected-by-user", "doesn't want to proceed"),
              "explore.ipynb": ("waiting for `kg cycle`",)}
# What it must say: beside the rule-effect bars, each rule's verdict as of the notebook's `now` (the recorded
# verdicts below it are a cycle's, days older).
REQUIRED = {"explore.ipynb": ("verdict now: ",)}


def execute(name: str, shared_data: Path, need, *, workspace: Path | None = None):
    """Run the notebook in a kernel; on `workspace` (KG_WORKSPACE, as a user points it at their own), else on
    what it builds itself."""
    nbformat, nbclient = need("nbformat"), need("nbclient")
    need("matplotlib")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    env = {**os.environ, "KG_SHARED_DATA": str(shared_data), "MPLBACKEND": "Agg"}
    env.pop("KG_WORKSPACE", None)
    if workspace is not None:
        env["KG_WORKSPACE"] = str(workspace)
    client = nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)  # the kernel inherits the environment of the process that starts it
    try:
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    return nb


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs_and_draws(name: str, shared_data: Path, need) -> None:
    nb = execute(name, shared_data, need)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert errors == []
    figures = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
               if "image/png" in o.get("data", {})]
    assert len(figures) >= EXPECTED[name], f"{name} drew {len(figures)} figures"
    stderr = [o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    assert not any("Traceback" in s for s in stderr)
    shown = _shown(nb)
    assert not [w for w in MISLEADING.get(name, ()) if w in shown], shown
    assert all(w in shown for w in REQUIRED.get(name, ())), shown
    # What the notebook adds to the data (lessons, a principle) is dated with the data: dated by the wall clock,
    # its ids, chains and figures changed with the day the notebook ran (les-20261202-... beside February events).
    dated = [(kind, day) for kind, day in re.findall(r"\b(ERR|LRN|FEAT|les|pri|kno)-(\d{8})-\d{3}\b", shown)]
    events = [day for kind, day in dated if kind.isupper()]
    added = [day for kind, day in dated if not kind.isupper()]
    assert not events or not added or max(added) <= max(events), (max(added), max(events))


def _shown(nb) -> str:
    return "\n".join(o.get("text", "") or "\n".join(v for k, v in o.get("data", {}).items() if k.startswith("text/"))
                     for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


@pytest.mark.slow
def test_explore_runs_on_a_new_users_empty_workspace(ws, shared_data: Path, need) -> None:
    """A new user's first run: `KG_WORKSPACE` on a workspace `kg init` just made. Three cells raised (the counts'
    dates were None, no node to centre the drawing on, then the export's missing centre); each says there is
    nothing yet instead."""
    nb = execute("explore.ipynb", shared_data, need, workspace=ws.root)
    errors = [f"cell {i}: {o.get('ename')}: {o.get('evalue')}" for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    shown = _shown(nb)
    assert "**0 nodes, 0 edges, 0 sessions** (no events yet" in shown, shown
    assert all(w in shown for w in ("no errors logged yet", "no patterns yet", "no principles yet",
                                    "no nodes to draw yet", "graphml  0 nodes, 0 edges")), shown


def test_every_notebook_is_covered() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(EXPECTED)
