"""`kg show` takes a change's id (`chg-…`), as the brief's Verifications Due prints it (QA9 #6: "no node", and the
error pointed at `kg list`, which lists no change). Through the real CLI, on either backend."""

from __future__ import annotations

from tests.cli.test_resolve_proposals import KEY, _ok, _proposed


def test_a_change_the_brief_names_is_shown_by_its_id(ws, run_kg):
    _proposed(run_kg)
    change = _ok(run_kg("approve 1 --json --now 2026-10-26T10:00:00")).json["change"]
    brief = _ok(run_kg("hook session-start --now 2026-11-03T10:00:00")).stdout
    assert f"[{change}]" in brief, brief  # (due: the brief names it)
    shown = _ok(run_kg(f"show [{change.upper()}] --json")).json["change"]
    assert shown["id"] == change and shown["key"] == KEY and shown["status"] == "applied", shown
    assert shown["evidence"] and shown["target"], shown
    text = _ok(run_kg(f"show {change}")).stdout
    assert text.startswith(f"[{change}] rule in {shown['target']} (applied): "), text
    assert f"  pattern: {KEY} [" in text and "  evidence:" in text, text
    r = run_kg("show chg-20200101-999")
    assert r.exit_code == 2 and "no node 'chg-20200101-999'" in r.stderr, (r.exit_code, r.stderr)
