"""The side index's BM25 cut (kg/store/sidefile.py `top_scores`): the k best and those tied with the k-th, best
first then by position, scores rounded to 9 decimals, exactly as sorting every posting did (issue 17)."""

from __future__ import annotations

import random

import pytest

from kg.store.sidefile import top_scores


def reference(total: dict[int, float], k: int) -> list[tuple[int, float]]:
    """The rule as kg wrote it before the cut (786aecf): sort every entry, keep those at or above the k-th."""
    best = sorted(((p, round(s, 9)) for p, s in total.items()), key=lambda x: (-x[1], x[0]))
    if len(best) > k:
        best = [x for x in best if x[1] >= best[k - 1][1]]
    return best


@pytest.mark.parametrize("seed", range(40))
def test_the_cut_is_the_full_sort_cut(seed):
    rng = random.Random(seed)
    n = rng.choice([0, 1, 5, 30, 400])
    levels = [rng.uniform(0.01, 25.0) for _ in range(rng.randint(1, 6))]  # few levels: many ties
    total = {}
    for p in rng.sample(range(10_000), n):
        s = rng.choice(levels) if rng.random() < 0.5 else rng.uniform(0.0001, 30.0)
        if rng.random() < 0.2:  # a hair off a level: equal once rounded, or not, by the 10th decimal
            s += rng.choice([1e-10, -1e-10, 4e-10, -6e-10, 2e-9])
        total[p] = s
    for k in (1, 2, 10, 50, n, n + 1):
        if k >= 1:
            assert top_scores(dict(total), k) == reference(total, k)


def test_ties_at_the_kth_are_all_kept():
    total = {7: 2.0, 3: 1.0, 9: 1.0000000001, 1: 1.0, 4: 0.5}
    assert top_scores(total, 2) == [(7, 2.0), (1, 1.0), (3, 1.0), (9, 1.0)]
    assert top_scores(total, 9) == [(7, 2.0), (1, 1.0), (3, 1.0), (9, 1.0), (4, 0.5)]
