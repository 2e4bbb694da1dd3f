"""A user-view tester's findings on memory search and injection (issue 17), through the real CLI."""

import json


def test_inject_budget_is_a_hard_cap_even_with_no_memory(run_kg):
    run_kg("log error 'npm ci failed with ERESOLVE' --now 2026-12-01T10:00")
    for budget in (40, 50, 59):
        r = run_kg(f"inject -m docker --budget {budget} --now 2026-12-02 --json")
        assert r.exit_code == 0
        assert len(r.json["block"]) <= budget and r.json["chars"] == len(r.json["block"])
        plain = run_kg(f"inject -m docker --budget {budget} --now 2026-12-02")
        assert len(plain.stdout.rstrip("\n")) <= budget


def test_an_entry_is_under_lessons_or_the_watch_list_not_both(run_kg):
    run_kg("log learning 'the staging database needs a VPN connection first' --priority high "
           "--now 2026-12-02T10:00")
    block = run_kg("inject -m 'staging database VPN' --now 2026-12-02T12:00 --json").json["block"]
    assert block.count("the staging database needs a VPN connection first") == 1, block


def test_identical_pending_entries_are_one_watch_line_with_a_count(run_kg):
    for minute in ("01", "02", "03"):
        run_kg(f"log error 'npm run build failed: generate is not a function' --priority high "
               f"--now 2026-12-02T10:{minute}")
    block = run_kg("inject -m 'npm build' --now 2026-12-02T12:00 --json").json["block"]
    assert block.count("generate is not a function") == 1, block
    assert "[ERR-20261202-003] (3×)" in block, block
