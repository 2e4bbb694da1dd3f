"""`kg verify --json` says `how` a rule left its file only for a paused one (QA5 #7): every live rule was
reported `"how": "edited"` ("a person edited inside its block") although nobody had touched TOOLS.md, so an agent
reading the JSON took every rule for edited by hand. Through the real CLI, on either backend."""

from __future__ import annotations

KEY = "git.push.no_upstream"


def _ok(r):
    assert r.exit_code == 0, r.stderr
    return r


def test_an_untouched_rule_has_no_how_and_a_withdrawn_one_has(ws, run_kg):
    with (ws.root / "kg.toml").open("a") as f:
        f.write("\n[rules.lifecycle.verification]\nmin_baseline_days = 0\n")
    for d in ("05", "06", "08"):
        _ok(run_kg(["log", "error", "git push failed: no upstream branch", "--area", "tooling", "--pattern-key", KEY,
                    "--session", f"s{d}", "--action", "run git push -u origin HEAD", "--now", f"2026-11-{d}T10:00:00",
                    "--wait"]))
    rep = _ok(run_kg("cycle --json --now 2026-11-09T05:40:00")).json
    assert [p["pattern_key"] for p in rep["promoted"]] == [KEY], rep
    live = _ok(run_kg("verify --dry-run --json --now 2026-11-09T06:00:00")).json["monitoring"]
    assert len(live) == 1 and "how" not in live[0] and live[0]["withdrawn_since"] is None, live
    (ws.root / "TOOLS.md").write_text("## Known Gotchas\n\nour own notes only\n")  # a person takes it out
    _ok(run_kg("cycle --now 2026-11-10T06:00:00"))
    paused = _ok(run_kg("verify --dry-run --json --now 2026-11-10T07:00:00")).json["monitoring"]
    assert [m.get("how") for m in paused] == ["withdrawn"], paused
