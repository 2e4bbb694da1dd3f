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


def test_patterns_waiting_for_one_budget_are_one_line_of_the_report(ws, run_kg):
    """QA6 #7: a cycle over an imported history printed a line for each of 159 patterns held back by one budget,
    every day in a scheduled job's log. One line per target and reason names three and counts the rest; --json
    keeps every one."""
    n = ws.rules.raw("lifecycle")["budget"]["per_file_per_cycle"] + 5
    with ws:
        for k in range(n):
            for i in range(3):
                ws.log("error", f"tool {k} broke", now=T0 + timedelta(hours=i), session=f"s{i % 2}",
                       area="tooling", pattern_key=f"tool.{k}", action=f"Avoid tool {k} pitfall", link=False)
    now = (T0 + timedelta(days=1)).isoformat()
    report = run_kg(f"cycle --dry-run --now {now}").stdout
    waiting = [ln for ln in report.splitlines() if "⏳" in ln]
    assert len(waiting) == 1, report
    assert waiting[0].startswith("  ⏳ waiting for TOOLS.md, 5 patterns: 'tool.")
    assert "and 2 more (`kg status` lists them): " in waiting[0] and "promotions into TOOLS.md" in waiting[0]
    assert len(run_kg(f"cycle --dry-run --json --now {now}").json["waiting"]) == 5
