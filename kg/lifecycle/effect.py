"""The effect prior: how much the workspace's rules usually change their pattern's rate, pooled across every
change (empirical Bayes), so a rule whose pattern recurred only a few times borrows strength from the rest.
Pure, plain Python.

The effect r = rate after / rate before lives on a grid of log r. For one change with k_b occurrences in T_b
days before and k_a in T_a after, and a Gamma(α, β) posterior-to-be on the rate before (Jeffreys ½ plus the
workspace's rate prior, `verify.population_prior`), integrating the rate out leaves the likelihood of r

    L(r) ∝ r^k_a · (β + T_b + r·T_a)^−(α + k_b + k_a)

(the conditional binomial of the Jeffreys test when β = 0). The prior on r is the discrete distribution on the
grid that maximises the likelihood of every change in the workspace (Kiefer–Wolfowitz NPMLE by EM), shrunk
toward a vague prior worth `effect_prior_strength` changes, so that a handful of changes cannot make it
certain. A verdict's posterior is then prior × L(r) on the grid.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

LO, HI, STEPS = math.log(0.02), math.log(50.0), 79  # r from 0.02× to 50×, about 10 % apart
GRID = tuple(LO + (HI - LO) * i / (STEPS - 1) for i in range(STEPS))
VAGUE_SD = 1.5  # the vague prior: normal on log r around 0 with this sd (r within 0.05×-20× at 95 %)
EM_ROUNDS = 60  # from the vague prior: few rounds also keep the fit smooth


@dataclass(frozen=True)
class EffectPrior:
    """Weights on `GRID` (sum 1), and how many changes they were fitted to (0: the vague prior)."""

    weights: tuple[float, ...]
    changes: int = 0

    def p_below(self, x: float) -> float:
        """The prior's own P(r < x): what the workspace's rules usually do."""
        return _cdf(self.weights, x)

    def as_dict(self, cut: float) -> dict[str, float | int]:
        return {"changes": self.changes, "p_below": round(self.p_below(cut), 4), "cut": cut,
                "median": round(_quantile(self.weights, 0.5), 4)}


def vague() -> EffectPrior:
    w = [math.exp(-0.5 * (g / VAGUE_SD) ** 2) for g in GRID]
    s = sum(w)
    return EffectPrior(tuple(x / s for x in w), 0)


def loglik(k_before: float, t_before: float, k_after: float, t_after: float,
           rate_prior: tuple[float, float] = (0.0, 0.0)) -> list[float]:
    """log L(r) on the grid (up to a constant), the rate before integrated out."""
    alpha = 0.5 + rate_prior[0] + k_before + k_after
    beta = rate_prior[1] + t_before
    return [k_after * g - alpha * math.log(beta + math.exp(g) * t_after) if beta + t_after > 0 else 0.0
            for g in GRID]


def fit(rows: Iterable[tuple[float, float, float, float]], *, strength: float, min_changes: int,
        rate_prior: tuple[float, float] = (0.0, 0.0)) -> EffectPrior:
    """The workspace's effect prior from every change's (k_before, t_before, k_after, t_after). Changes with
    no time on either side say nothing and are left out; below `min_changes` the vague prior is returned."""
    base = vague().weights
    liks = []
    for kb, tb, ka, ta in rows:
        if tb <= 0 or ta <= 0:
            continue
        ll = loglik(kb, tb, ka, ta, rate_prior)
        top = max(ll)
        liks.append([math.exp(x - top) for x in ll])
    if len(liks) < min_changes:
        return vague()
    w = list(base)
    n = len(liks)
    total = n + strength
    for _ in range(EM_ROUNDS):
        acc = [strength * b for b in base]
        for lik in liks:
            z = sum(map(float.__mul__, w, lik))
            if z > 0:
                acc = [a + wi * li / z for a, wi, li in zip(acc, w, lik, strict=True)]
        w = [a / total for a in acc]
    return EffectPrior(tuple(w), n)


@dataclass(frozen=True)
class Posterior:
    weights: tuple[float, ...]

    def p_below(self, x: float) -> float:
        return _cdf(self.weights, x)

    def quantile(self, q: float) -> float:
        return _quantile(self.weights, q)


def posterior(prior: EffectPrior, k_before: float, t_before: float, k_after: float, t_after: float,
              rate_prior: tuple[float, float] = (0.0, 0.0)) -> Posterior:
    ll = loglik(k_before, t_before, k_after, t_after, rate_prior)
    top = max(ll)
    w = [p * math.exp(x - top) for p, x in zip(prior.weights, ll, strict=True)]
    s = sum(w)
    return Posterior(tuple(x / s for x in w))


def _cdf(w: Sequence[float], x: float) -> float:
    """Mass below x, each grid point's mass spread evenly over its cell (linear within a cell)."""
    if x <= 0:
        return 0.0
    pos = (math.log(x) - LO) / (HI - LO) * (STEPS - 1) + 0.5  # cell j spans [j - ½, j + ½] in grid steps
    if pos <= 0:
        return 0.0
    full = min(int(pos), STEPS)
    out = sum(w[:full])
    if full < STEPS:
        out += w[full] * (pos - full)
    return min(out, 1.0)


def _quantile(w: Sequence[float], q: float) -> float:
    acc = 0.0
    step = (HI - LO) / (STEPS - 1)
    for j, wj in enumerate(w):
        if acc + wj >= q and wj > 0:
            frac = (q - acc) / wj
            return math.exp(GRID[j] + (frac - 0.5) * step)
        acc += wj
    return math.exp(HI)
