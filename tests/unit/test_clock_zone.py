"""kg/core/clock.py reads every time in the clock zone in effect (the workspace's), not the process's TZ."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from kg.core import clock
from kg.core.errors import UsageError


@pytest.fixture
def in_la_process(monkeypatch):
    """This process in America/Los_Angeles for the test, its TZ restored after."""
    with monkeypatch.context() as m:
        m.setenv("TZ", "America/Los_Angeles")
        time.tzset()
        try:
            yield
        finally:
            clock.use_zone(None)
    time.tzset()


@pytest.mark.parametrize(("zone", "text", "expected"), [
    ("UTC", "2026-12-05T20:00:00Z", datetime(2026, 12, 5, 20, 0)),
    ("Asia/Tokyo", "2026-12-05T20:00:00Z", datetime(2026, 12, 6, 5, 0)),
    ("Asia/Tokyo", "2026-12-05T20:00:00+01:00", datetime(2026, 12, 6, 4, 0)),
    ("+05:30", "2026-12-05T20:00:00Z", datetime(2026, 12, 6, 1, 30)),
    ("Asia/Tokyo", "2026-12-05T20:00:00", datetime(2026, 12, 5, 20, 0)),  # no offset: read in the zone
    ("Asia/Tokyo", "2026-12-05", datetime(2026, 12, 5, 0, 0)),
])
def test_a_time_is_read_in_the_clock_zone_not_the_process_zone(in_la_process, zone, text, expected):
    clock.use_zone(clock.parse_zone(zone))
    assert clock.parse_time(text) == expected
    assert clock.now(text) == expected


def test_now_mtimes_and_an_aware_override_are_in_the_clock_zone(in_la_process):
    clock.use_zone(ZoneInfo("Asia/Tokyo"))
    tokyo = datetime.now(ZoneInfo("Asia/Tokyo")).replace(tzinfo=None)
    assert abs(clock.now() - tokyo) < timedelta(seconds=5)
    assert abs(clock.wall() - tokyo) < timedelta(seconds=5)
    assert abs(clock.from_timestamp(time.time()) - tokyo) < timedelta(seconds=5)
    assert clock.now(datetime(2026, 12, 5, 20, 0, tzinfo=UTC)) == datetime(2026, 12, 6, 5, 0)
    clock.use_zone(None)  # no workspace: the process's own zone
    assert clock.zone_name(clock.zone()) == "America/Los_Angeles"


@pytest.mark.parametrize(("name", "shown"), [
    ("Europe/Berlin", "Europe/Berlin"), ("UTC", "UTC"), ("+05:30", "+05:30"), ("-08:00", "-08:00"),
    (" Asia/Tokyo\n", "Asia/Tokyo"),
])
def test_a_zone_is_named_as_it_is_recorded(name, shown):
    assert clock.zone_name(clock.parse_zone(name)) == shown


@pytest.mark.parametrize("name", ["Mars/Olympus", "", "../etc/passwd", "/etc/localtime", "+25:00", "America"])
def test_an_unknown_zone_is_refused_with_an_example(name):
    with pytest.raises(UsageError, match="Europe/Berlin"):
        clock.parse_zone(name)
