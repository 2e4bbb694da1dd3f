"""The workspace's mix learnt from relapses (`verification.mix_source = "relapse"`). Pure.

`verify.mix_factor` learns how likely a rule here is to work from kg's own settled verdicts (confirmed against
reverted), so a workspace whose bad rules were confirmed early learns that rules work and keeps more: a loop.
A relapse verdict (`verify.relapse`) measures a reverted pattern's rate without its rule, in the time since
the revert, so it does not rest on the thin baseline that misled the verdict: it says whether the revert was
wrong (the rule worked: the rate came back) or right. The share of reverts that were wrong, against the share
expected on the mix the levels were chosen on (`relapse_reference`), says whether rules here work more often
(kg reverts too readily: keep levels eased) or less often (keep levels raised) than that mix.
"""

from __future__ import annotations

from collections.abc import Iterable

from kg.lifecycle import stats
from kg.lifecycle.policy import LifecyclePolicy


def relapse_factor(kinds: Iterable[str], policy: LifecyclePolicy) -> float:
    """The odds against a rule working, relative to the reference mix (1.0: as set), from the decisive relapse
    verdicts of reverted patterns ("confirmed": the revert was wrong; "ineffective" / "made_worse": right),
    shrunk toward `relapse_reference` with the weight of `mix_strength` verdicts."""
    v = policy.verification
    if v.mix_strength <= 0:
        return 1.0
    wrong = right = 0
    for k in kinds:
        wrong += k == "confirmed"
        right += k in ("ineffective", "made_worse")
    return stats.shrunk_odds(wrong, right, v.mix_strength, v.relapse_reference)
