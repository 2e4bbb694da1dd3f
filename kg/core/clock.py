"""Time is a parameter: every function that depends on "now" takes it; `--now` and `KG_NOW` set it."""

from __future__ import annotations

import os
from datetime import date, datetime, timedelta

from kg.core.errors import UsageError

ENV_NOW = "KG_NOW"
# The years a time may fall in. An id and a daily log carry the date as eight digits (`LRN-20261130-001`,
# `2026-11-30.md`): year 999 wrote `LRN-9990501-001`, which the applier refuses after `kg log` had acknowledged
# it (the entry was lost), and year 1 overflowed the first date arithmetic.
YEARS = (1000, 9999)


def parse_time(value: str, *, what: str = "time") -> datetime:
    """Parse an ISO date or datetime into a naive local datetime (seconds precision).

    Accepts `2026-11-30`, `2026-11-30T10:35`, `2026-11-30 10:35:00`, with or without a `Z`/offset
    (an offset is dropped after conversion to local time, because the daily log is local).
    """
    text = value.strip()
    try:
        if len(text) == 10:
            parsed = datetime.combine(date.fromisoformat(text), datetime.min.time())
        else:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"invalid {what} {value!r}: use ISO 8601, for example 2026-11-30 or 2026-11-30T10:35:00"
        ) from None
    if parsed.tzinfo is not None:
        try:
            parsed = parsed.astimezone().replace(tzinfo=None)
        except OverflowError:  # 0001-01-01T00:00+01:00 falls before year 1
            raise UsageError(_out_of_range(what, value)) from None
    return in_range(parsed.replace(microsecond=0), what=what, value=value)


def in_range(at: datetime, *, what: str = "time", value: object = None) -> datetime:
    """`at` if its year is one kg can write (YEARS), else a UsageError that says the accepted range."""
    if not YEARS[0] <= at.year <= YEARS[1]:
        raise UsageError(_out_of_range(what, at.isoformat() if value is None else value))
    return at


def _out_of_range(what: str, value: object) -> str:
    return (f"invalid {what} {str(value)!r}: the year must be {YEARS[0]}-{YEARS[1]} "
            "(kg writes dates as eight digits), for example 2026-11-30T10:35:00")


def now(override: str | datetime | None = None) -> datetime:
    """The current time: an explicit override, else `KG_NOW`, else the wall clock."""
    if isinstance(override, datetime):
        return in_range(override.replace(microsecond=0, tzinfo=None), what="--now")
    if override:
        return parse_time(override, what="--now")
    env = os.environ.get(ENV_NOW)
    if env:
        return parse_time(env, what=ENV_NOW)
    return datetime.now().replace(microsecond=0)


def parse_since(value: str, now_: datetime) -> datetime:
    """`--since` takes an ISO date/time or a relative span such as `7d`, `12h`, `2w`."""
    text = value.strip().lower()
    units = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
    if text and text[-1] in units and text[:-1].isdigit():
        return now_ - timedelta(**{units[text[-1]]: int(text[:-1])})
    try:
        return parse_time(value, what="--since")
    except UsageError:  # the refusal named only dates: the spans it also takes are what an agent reaches for
        raise UsageError(f"invalid --since {value!r}: use a span such as 7d, 12h, 2w or 30m, or an ISO 8601 "
                         "date or time such as 2026-11-30 or 2026-11-30T10:35:00") from None
