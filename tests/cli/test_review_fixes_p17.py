"""User-visible defects fixed in the p17 review, through the real CLI on a real workspace: an old graph's aider
session id with colons is found by `kg search --session` in the dashed form too; the hooks' bad-input rule."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("asked", ["2025-06-02-14-29-21", "2025-06-02-14:29:21"])
def test_search_in_an_old_graphs_aider_session_takes_either_form(run_kg, asked):
    """A graph an older kg wrote holds the chat's session as `2025-06-02-14:29:21`; its file, and kg now, name it
    with dashes: `kg search --session <the dashed form>` found nothing in the graph (kg session end takes both)."""
    old = "2025-06-02-14:29:21"
    logged = run_kg(["--now", "2025-06-02T14:30:00", "log", "error", "the search block failed to match", "--session",
                     old, "--wait", "--json"])
    assert logged.exit_code == 0, logged.stderr
    run_kg(["--now", "2025-06-02T14:31:00", "log", "error", "the search block failed elsewhere", "--session",
            "2025-06-03-09-00-00", "--wait"])
    found = run_kg(["--now", "2025-06-02T15:00:00", "search", "search block failed", "--session", asked,
                    "--source", "graph", "--json"])
    assert found.exit_code == 0, found.stderr
    assert [hit["ref"] for hit in found.json] == [logged.json["id"]]
