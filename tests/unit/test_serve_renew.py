"""When the read server opens its graph again to give memory back (kg.serve.renew.due): pure, no database."""

from __future__ import annotations

import pytest

from kg.serve.renew import Bounds, due

B = Bounds(idle_seconds=5.0, above_mb=250.0, hard_mb=400.0, wal_mb=4.0)


@pytest.mark.parametrize("grown, idle_for, rss_mb, wal_mb, why", [
    (False, 60.0, 900.0, 7.0, ""),  # nothing applied since it opened: opening again gives nothing back
    (True, 0.0, 240.0, 0.1, ""),  # busy, under every bound
    (True, 4.9, 260.0, 0.1, ""),  # over the soft bound, not idle long enough
    (True, 5.0, 260.0, 0.1, "idle, 260 MB resident, over 250"),
    (True, 60.0, 250.0, 0.1, ""),  # at the bound is not over it
    (True, 0.0, 401.0, 0.1, "401 MB resident, over 400"),  # past the hard bound: busy or not
    (True, 0.0, 200.0, 4.0, "a 4.0 MB write-ahead log"),  # before Kùzu's own (slow) checkpoint at 8 MB
])
def test_due(grown, idle_for, rss_mb, wal_mb, why):
    assert due(B, grown=grown, idle_for=idle_for, rss_mb=rss_mb, wal_mb=wal_mb) == why


def test_the_shipped_bounds_are_read_from_the_rules(tmp_path):
    import kg
    from kg.serve.server import settings

    ws = kg.init_workspace(tmp_path / "ws")
    got = settings(ws).renew
    assert got == Bounds(idle_seconds=5.0, above_mb=250.0, hard_mb=400.0, wal_mb=4.0, grew_mb=24.0)
    (ws.root / "kg.toml").write_text("[rules.policy.serve]\nrenew_above_mb = 300\n", encoding="utf-8")
    assert settings(kg.open_workspace(ws.root)).renew.above_mb == 300.0


def test_a_zero_log_bound_renews_after_any_write_but_not_on_an_empty_log():
    zero = Bounds(idle_seconds=5.0, above_mb=250.0, hard_mb=400.0, wal_mb=0.0)
    assert due(zero, grown=True, idle_for=0.0, rss_mb=100.0, wal_mb=0.01) == "a 0.0 MB write-ahead log"
    assert due(zero, grown=True, idle_for=0.0, rss_mb=100.0, wal_mb=0.0) == ""


def test_idle_after_growing_past_its_open_renews_under_the_bound_in_mb():
    """At 100k entries a fresh server holds ~135 MB and one `kg log` with a pattern key takes it to ~171: under
    250 MB, so only the growth over its open gives it back."""
    grew = Bounds(idle_seconds=5.0, above_mb=250.0, hard_mb=400.0, wal_mb=4.0, grew_mb=24.0)
    assert due(grew, grown=True, idle_for=5.0, rss_mb=171.0, wal_mb=0.1, opened_mb=135.0) == (
        "idle, 171 MB resident, 36 MB over its open, over 24")
    assert due(grew, grown=True, idle_for=4.9, rss_mb=171.0, wal_mb=0.1, opened_mb=135.0) == ""  # not idle yet
    assert due(grew, grown=True, idle_for=60.0, rss_mb=155.0, wal_mb=0.1, opened_mb=135.0) == ""  # reads' growth
    assert due(grew, grown=False, idle_for=60.0, rss_mb=171.0, wal_mb=0.1, opened_mb=135.0) == ""  # none applied
    assert due(grew, grown=True, idle_for=60.0, rss_mb=171.0, wal_mb=0.1, opened_mb=0.0) == ""  # open not known
    off = Bounds(idle_seconds=5.0, above_mb=250.0, hard_mb=400.0, wal_mb=4.0)
    assert due(off, grown=True, idle_for=60.0, rss_mb=171.0, wal_mb=0.1, opened_mb=135.0) == ""
