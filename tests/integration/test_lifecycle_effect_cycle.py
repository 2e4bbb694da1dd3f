"""The effect prior and the baseline gate through the real cycle (both off in the packaged rules; a workspace
turns them on in kg.toml): a pattern with too little history waits, and a verdict shows the effect prior it
was taken with, in the cycle report as `kg verify --json` prints it."""

from __future__ import annotations

from datetime import datetime, timedelta

from kg.lifecycle import api

T0 = datetime(2026, 4, 1, 9)
D = timedelta(days=1)
RULES = """[rules.lifecycle.verification]
effect_prior = true
effect_prior_min_changes = 2
min_baseline_events = 4
min_baseline_days = 0
"""  # min_baseline_days 0: the test is about the events gate and the effect prior, not the days watched


def _log(ws, k: int, at: datetime, i: int) -> None:
    ws.log("error", f"tool {k} broke", now=at, session=f"s{i % 2}-{at:%d}", area="tooling",
           pattern_key=f"tool.{k}", action=f"Avoid tool {k} pitfall", link=False)


def test_a_thin_baseline_waits_and_verdicts_carry_the_effect_prior(tmp_path):
    import kg

    kg.init_workspace(tmp_path / "ws")
    (tmp_path / "ws" / "kg.toml").write_text(RULES)
    ws = kg.open_workspace(tmp_path / "ws")
    assert ws.rules.raw("lifecycle")["verification"]["min_baseline_events"] == 4
    with ws:
        for k in range(3):
            for i in range(3):
                _log(ws, k, T0 + i * timedelta(hours=1), i)
        first = api.cycle(ws, now=T0 + timedelta(hours=8)).as_dict()
        assert first["promoted"] == []
        assert {w["pattern_key"] for w in first["waiting"]} == {"tool.0", "tool.1", "tool.2"}
        assert all("verification.min_baseline_events" in w["reason"] for w in first["waiting"])
        for day in range(1, 6):
            for k in range(3):
                _log(ws, k, T0 + day * D, day)
        second = api.cycle(ws, now=T0 + 6 * D).as_dict()
        assert sorted(p["pattern_key"] for p in second["promoted"]) == ["tool.0", "tool.1", "tool.2"]
        for day in range(7, 14):
            _log(ws, 2, T0 + day * D, day)
        third = api.verify(ws, now=T0 + 13.5 * D)
    items = {v["pattern_key"]: v for v in third["verified"]}
    assert set(items) == {"tool.0", "tool.1", "tool.2"}
    for v in items.values():
        prior = v["stats"]["effect_prior"]
        assert prior["changes"] == 3 and 0 < prior["p_below"] < 1
        assert v["stats"]["expected_after"] > 0
        assert "effect prior from 3 changes" in v["summary"]
    assert items["tool.2"]["verdict"] != "confirmed" and items["tool.0"]["verdict"] != "made_worse"
