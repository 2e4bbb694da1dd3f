"""The trainer of the `kg reflect` model (bench/reflect_train.py), on rows made here: what it does with a class the
training pool holds no turn of (leave-one-provider-out leaves the one user who states lasting rules out)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("numpy")
BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def rt():
    sys.path.insert(0, str(BENCH))  # the trainer's own imports are bench-relative
    try:
        spec = importlib.util.spec_from_file_location("reflect_train_under_test", BENCH / "reflect_train.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCH))


def turn(session: str, signals: tuple[str, ...], *gold: str) -> dict:
    return {"session": session, "turn": 0, "text": "", "signals": signals, "gold": set(gold)}


def test_a_class_with_no_turn_in_the_pool_keeps_its_stated_priors_not_a_fit_on_nothing(rt):
    pool = [turn(f"s{i}", ("instruction",), "correction" if i % 3 == 0 else "x") for i in range(60)]
    pool += [turn("t", ("lasting",)), turn("u", ("prohibition", "instruction"))]
    models = rt.train(pool, dev=False)
    assert models["preference"] == (rt.PRIOR_BIAS, rt.PRIOR["preference"])
    # one lasting-rule cue of anyone's ("from now on ...") is a preference; a weak one alone is not
    assert "preference" in rt.decide(models, ("from_now_on",))
    assert "preference" not in rt.decide(models, ("lasting",))
    # a class with turns in the pool is still fitted
    assert models["correction"] != (rt.PRIOR_BIAS, rt.PRIOR["correction"])
