"""Issue 20's fault suite, small enough for CI: kill -9 at random moments of log, the detached applier, cycle,
a `with ws:` batch and a draining reader; every acknowledged entry survives, none twice, the workspace
opens. The large run is `bench/fault_soak.py`."""

from __future__ import annotations

import random
import secrets
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import fault_trials  # noqa: E402


@pytest.fixture(scope="module")
def fault_ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("fault") / "ws"
    assert fault_trials.kg(root.parent, "init", str(root)).returncode == 0
    return root


@pytest.mark.parametrize("scenario", fault_trials.SCENARIOS)
def test_kill_9_loses_nothing_acknowledged(fault_ws, scenario):
    rng = random.Random(f"{scenario}-20")
    tally = fault_trials.Tally()
    for n in range(1):
        fault_trials.trial(fault_ws, scenario, rng, tally, f"t{secrets.token_hex(4)}{n}")
    assert (tally.lost, tally.duplicated, tally.bricked) == (0, 0, 0), tally.notes
    assert tally.trials == 1
