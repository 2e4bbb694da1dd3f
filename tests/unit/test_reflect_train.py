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


def test_the_one_standard_error_rule_weighs_each_threshold_fold_by_fold(rt):
    """Folds that differ from each other (one fold's sessions score ~0.15 below another's at every threshold) must not
    let through a threshold that loses in every fold: the rule measures the shortfall fold by fold. (Measured on the
    441 turns: the unpaired error let 0.65 through, ~0.03 short of the best, where 0.55 is ~0.015 short.)"""
    f1 = {0.4: [0.73, 0.92, 0.86, 0.76, 0.84],
          0.55: [0.74, 0.90, 0.85, 0.75, 0.85],  # short in three folds, ahead in two: within
          0.65: [0.72, 0.90, 0.85, 0.70, 0.83]}  # short in every fold: not within, though inside the spread
    assert rt.one_se(f1) == 0.55


def test_a_chosen_threshold_is_never_under_the_class_s_min_score(rt, monkeypatch):
    """Without aider's turns the rule chose 0.40, and aider's quiet turns drew 8 false alarms where 0.45-0.65 drew 3:
    a cross-validated threshold never goes under min_score (rules/reflect.toml), a finding more likely than not."""
    pool = [turn(f"s{i}", ("instruction", "contrast") if i % 2 else ("instruction",),
                 *(("correction",) if i % 2 and i % 7 else ())) for i in range(120)]
    with monkeypatch.context() as m:
        m.setattr(rt, "one_se", lambda f1: 0.3)  # the rule's choice on a pool like the one without aider's turns
        assert rt.calibrate(pool)["correction"] == rt.default_rules(model=False).detector("correction").min_score
