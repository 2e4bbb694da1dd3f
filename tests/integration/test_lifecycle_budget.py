"""Budgets through the real cycle: at most N promotions into a file per day's cycles, ranked by impact; the
rest wait (listed in the report and in `kg status`), and a second cycle with the same `now` changes nothing."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from kg.lifecycle import api

pytestmark = pytest.mark.baseline_wait_off("the per-file budget")

T0 = datetime(2026, 4, 1, 9)


def test_per_file_budget_ranks_by_impact_and_the_rest_wait(ws):
    n = ws.rules.raw("lifecycle")["budget"]["per_file_per_cycle"] + 3
    with ws:
        for k in range(n):
            for i in range(3 + (k == n - 1) * 3):          # the last pattern recurs most: highest impact
                ws.log("error", f"tool {k} broke", now=T0 + timedelta(hours=i), session=f"s{i % 2}",
                       area="tooling", pattern_key=f"tool.{k}", action=f"Avoid tool {k} pitfall", link=False)
        now = T0 + timedelta(days=1)
        first = api.cycle(ws, now=now).as_dict()
        per_file = n - 3
        assert [p["target"] for p in first["promoted"]] == ["TOOLS.md"] * per_file
        assert first["promoted"][0]["pattern_key"] == f"tool.{n - 1}"
        assert len(first["waiting"]) == 3 and all("promotions into TOOLS.md" in w["reason"] for w in first["waiting"])
        again = api.cycle(ws, now=now).as_dict()
        assert again["changed"] is False and again["promoted"] == [] and len(again["waiting"]) == 3
        status = api.lifecycle_status(ws, now=now)
        assert status["ready_to_promote_total"] == 3
        later = api.cycle(ws, now=now + timedelta(days=1)).as_dict()
        assert len(later["promoted"]) == 3 and later["waiting"] == []
    tools = (ws.root / "TOOLS.md").read_text()
    assert sum(line.startswith("- Avoid tool") for line in tools.splitlines()) == n
