"""Time is a parameter: every function that depends on "now" takes it; `--now` and `KG_NOW` set it.

Every time kg stores, compares or shows is a naive wall-clock time in the workspace's clock zone (`zone()`), one
per workspace whatever the zone of the process: a UTC cron job and a shell in America/Los_Angeles logging into one
workspace seconds apart stored times 8 hours apart. The workspace sets it (`use_zone`, kg/workspace_zone.py);
until one does, it is the process's own zone. The process's TZ is never changed (a notebook's process is the
analyst's)."""

from __future__ import annotations

import os
import re
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from kg.core.errors import UsageError

ENV_NOW = "KG_NOW"
_zone: tzinfo | None = None  # the workspace's clock zone in this process (None: the process's own)
_OFFSET = re.compile(r"^([+-])(\d{2}):(\d{2})$")
ZONE_EXAMPLE = 'an IANA name such as "Europe/Berlin" or "America/Los_Angeles", or a fixed offset such as "+05:30"'


def use_zone(zone: tzinfo | None) -> None:
    """Make `zone` the clock zone of every time this process reads or writes (None: the process's own)."""
    global _zone
    _zone = zone


def zone() -> tzinfo:
    """The clock zone in effect: the workspace's, else this process's own."""
    return _zone if _zone is not None else local_zone()


def local_zone() -> tzinfo:
    """This process's zone: its IANA name when it has one (TZ, else /etc/localtime), else its offset now."""
    return _local()[0]


def local_note() -> str | None:
    """Why this process's zone is not the one its TZ names (a POSIX rule, an unknown name, a copied localtime),
    for where the zone is shown; None when it is."""
    return _local()[1]


def _local() -> tuple[tzinfo, str | None]:
    tz = os.environ.get("TZ", "")
    names, said = [], None
    if tz:
        name = tz[1:] if tz.startswith(":") else tz  # glibc's `:Europe/Berlin`
        names.append(name.split("zoneinfo/", 1)[1] if "zoneinfo/" in name else name)  # a path into the database
        said = f"TZ={tz!r} names no zone kg knows (a POSIX rule, an unknown name or a file)"
    try:
        link = os.readlink("/etc/localtime")
        names += [link.split("zoneinfo/", 1)[1]] if "zoneinfo/" in link else []
    except OSError:
        pass
    for i, name in enumerate(names):
        try:
            zone_ = ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            continue
        if i == 0 and tz:
            return zone_, None
        return zone_, (f"{said}: kg took /etc/localtime's zone {name}; set [clock] zone in kg.toml to the zone "
                       "you mean" if said else None)
    offset = datetime.now().astimezone().utcoffset() or timedelta(0)
    fixed = timezone(offset)
    return fixed, (f"{said or 'this machine names no time zone (/etc/localtime is no link to one)'}: kg took "
                   f"the fixed offset {zone_name(fixed)} now, which does not follow summer time; set [clock] zone "
                   "in kg.toml to the zone you mean, for example \"Europe/Berlin\"")


def zone_name(zone_: tzinfo) -> str:
    """How a zone is recorded and shown: its IANA name, else its fixed offset (`+05:30`)."""
    if isinstance(zone_, ZoneInfo):
        return zone_.key
    minutes = int((zone_.utcoffset(None) or timedelta(0)).total_seconds()) // 60
    return f"{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def same_zone(a: tzinfo, b: tzinfo) -> bool:
    """Whether two zones are one, whatever their spelling (`UTC`, `Etc/UTC`): the same name, else the same
    offsets at a winter and a summer moment of the years around now and of 2000 (a fixed offset against a DST
    zone differs in one of them)."""
    if zone_name(a) == zone_name(b):
        return True
    moments = [datetime(y, m, 15, 12, tzinfo=UTC) for y in (2000, datetime.now().year) for m in (1, 7)]
    return all(t.astimezone(a).utcoffset() == t.astimezone(b).utcoffset() for t in moments)


def parse_zone(name: str, *, what: str = "time zone") -> tzinfo:
    """A zone named as `zone_name` writes it, else a UsageError naming the value and an example."""
    text = name.strip() if isinstance(name, str) else ""
    m = _OFFSET.match(text)
    if m and int(m.group(2)) < 24 and int(m.group(3)) < 60:
        minutes = int(m.group(2)) * 60 + int(m.group(3))
        return timezone(timedelta(minutes=-minutes if m.group(1) == "-" else minutes))
    if text and not text.startswith(("/", ".")) and ".." not in text:
        try:
            return ZoneInfo(text)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            folded = _case_folded(text)
            if folded is not None:
                return folded
    raise UsageError(f"unknown {what} {name!r}: use {ZONE_EXAMPLE}")


def _case_folded(text: str) -> tzinfo | None:
    """The zone whose IANA name is `text` in another case (`utc`, `gmt`, `etc/utc`, `europe/berlin`), under its
    own name: zoneinfo's keys are case-sensitive, a person's kg.toml is not (no two IANA names differ by case)."""
    from zoneinfo import available_timezones

    found = [name for name in available_timezones() if name.casefold() == text.casefold()]
    return ZoneInfo(found[0]) if len(found) == 1 else None


def from_timestamp(seconds: float) -> datetime:
    """A file's mtime (or any epoch time) as a naive wall-clock time in the clock zone."""
    return datetime.fromtimestamp(seconds, zone()).replace(tzinfo=None)


def wall() -> datetime:
    """The machine's clock now in the clock zone, whatever `--now` or KG_NOW say (whole seconds)."""
    return datetime.now(zone()).replace(tzinfo=None, microsecond=0)
# The years a time may fall in. An id and a daily log carry the date as eight digits (`LRN-20261130-001`,
# `2026-11-30.md`): year 999 wrote `LRN-9990501-001`, which the applier refuses after `kg log` had acknowledged
# it (the entry was lost), and year 1 overflowed the first date arithmetic.
YEARS = (1000, 9999)


def parse_time(value: str, *, what: str = "time") -> datetime:
    """Parse an ISO date or datetime into a naive datetime in the clock zone (seconds precision).

    Accepts `2026-11-30`, `2026-11-30T10:35`, `2026-11-30 10:35:00`, with or without a `Z`/offset: a time
    with one is converted into the clock zone and the offset dropped; one without is read in the clock zone.
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
            parsed = parsed.astimezone(zone()).replace(tzinfo=None)
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


def naive(at: datetime, *, what: str = "time") -> datetime:
    """A datetime as kg holds times: naive, in the clock zone, whole seconds, in YEARS. One with a zone
    (`datetime.now(timezone.utc)`) is converted into the clock zone first: compared as it came with the graph's
    naive times it was a TypeError (QA8 #1: `since=` a zoned datetime)."""
    if at.tzinfo is not None:
        try:
            at = at.astimezone(zone())
        except OverflowError:  # 0001-01-01T00:00+01:00 falls before year 1
            raise UsageError(_out_of_range(what, at.isoformat())) from None
    return in_range(at.replace(microsecond=0, tzinfo=None), what=what)


def now(override: str | datetime | None = None) -> datetime:
    """The current time: an explicit override, else `KG_NOW`, else the wall clock."""
    if isinstance(override, datetime):
        return naive(override, what="--now")
    if override:
        return parse_time(override, what="--now")
    env = os.environ.get(ENV_NOW)
    if env:
        return parse_time(env, what=ENV_NOW)
    return wall()


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
