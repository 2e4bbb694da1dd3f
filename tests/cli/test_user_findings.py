"""A user-view tester's findings (the agent, the analyst, the periodic job), through the real CLI."""

import pytest


@pytest.mark.parametrize("query", ["ERR-20261201-002", "[ERR-20261201-002]", "err-20261201-002",
                                   "what happened in ERR-20261201-002?"])
def test_an_id_in_the_query_returns_that_entry_first(run_kg, query):
    run_kg("log error 'docker build failed: permission denied on the socket' --now 2026-12-01T09:00")
    run_kg("log error 'npm ci failed with ERESOLVE peer dependency conflict' --now 2026-12-01T10:00")
    for minute in ("01", "02", "03"):
        run_kg(f"log learning 'the staging database needs a VPN connection {minute}' --now 2026-12-01T11:{minute}")
    r = run_kg(["search", query, "--now", "2026-12-02", "--json"])
    assert r.exit_code == 0, r.stderr
    top = r.json[0]
    assert (top["source"], top["ref"]) == ("graph", "ERR-20261201-002"), [h["ref"] for h in r.json]
    assert top["match"] != "recent"
    plain = run_kg(["search", query, "--now", "2026-12-02"])
    assert "No results" not in plain.stdout and "ERESOLVE" in plain.stdout.splitlines()[2], plain.stdout
