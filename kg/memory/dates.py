"""Dates and relative times named in a search query, as time windows. Pure.

"What was Sam doing on December 4, 2023?", "errors from last week", "上周的部署" name a time that lives on
events and sessions, not in their text: the words are taken out of the query's terms and the window lifts the
events whose time falls in it. The vocabulary (month names, relative phrases) is data in rules/memory.toml
`[dates]`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from kg.core.policy import RuleReader


@dataclass(frozen=True)
class DateRules:
    w_date: float
    slack_days: int
    window_candidates: int
    months: tuple[str, ...]
    month_abbreviations: tuple[str, ...]
    relative: dict[str, tuple[int, int]]
    ago_words: tuple[str, ...]
    day_units: tuple[str, ...]
    week_units: tuple[str, ...]
    month_units: tuple[str, ...]
    month_prepositions: tuple[str, ...] = ()
    year_units: tuple[str, ...] = ()
    numbers: dict[str, int] | None = None  # "two weeks ago": number words for the digits of an "ago"
    ago_joined_words: tuple[str, ...] = ()  # "三天前": number, unit and word written without spaces
    weekdays: tuple[str, ...] = ()  # Monday first
    weekday_prepositions: tuple[str, ...] = ()
    weekday_before_today: tuple[str, ...] = ()
    weekday_joined_prefixes: tuple[str, ...] = ()
    weekdays_joined: tuple[str, ...] = ()  # Monday first
    weekday_joined_sunday: tuple[str, ...] = ()
    weekday_back: str = ""
    weekday_this: tuple[str, ...] = ()

    @classmethod
    def from_reader(cls, d: RuleReader) -> DateRules:
        rel = d.table("relative", {})
        relative: dict[str, tuple[int, int]] = {}
        for phrase in rel.data:
            value = rel.get(phrase)
            if not (isinstance(value, list) and len(value) == 2 and all(isinstance(x, int) for x in value)
                    and value[0] < value[1]):
                raise rel.fail(phrase, f"must be [start, end] in whole days with start < end, not {value!r}")
            relative[str(phrase).lower()] = (value[0], value[1])
        months = d.strings("months", items="non-blank")
        abbreviations = d.strings("month_abbreviations", items="non-blank")
        if len(months) != 12 or len(abbreviations) != 12:
            raise d.fail("months", "months and month_abbreviations must list the twelve months in order")
        weekdays = d.strings("weekdays", [], items="non-blank")
        joined = d.strings("weekdays_joined", [], items="non-blank")
        for name, days in (("weekdays", weekdays), ("weekdays_joined", joined)):
            if days and len(days) != 7:
                raise d.fail(name, "must list the seven days of the week, Monday first")
        before = tuple(p.lower() for p in d.strings("weekday_before_today", [], items="non-blank"))
        preps = tuple(p.lower() for p in d.strings("weekday_prepositions", [], items="non-blank"))
        if not set(before) <= set(preps):
            raise d.fail("weekday_before_today", "each word must be one of weekday_prepositions")
        back = d.get("weekday_back", "")
        if not isinstance(back, str):
            raise d.fail("weekday_back", f"must be a string, not {back!r}")
        return cls(w_date=d.number("w_date", 0, 10), slack_days=int(d.number("slack_days", 0, 31)),
                   window_candidates=int(d.number("window_candidates", 0, 10000)),
                   months=tuple(m.lower() for m in months), month_abbreviations=tuple(m.lower() for m in abbreviations),
                   relative=relative,
                   ago_words=tuple(d.strings("ago_words")), day_units=tuple(d.strings("day_units")),
                   week_units=tuple(d.strings("week_units")), month_units=tuple(d.strings("month_units")),
                   month_prepositions=tuple(p.lower() for p in d.strings("month_prepositions", items="non-blank")),
                   year_units=tuple(d.strings("year_units", [])), numbers=_numbers(d),
                   ago_joined_words=tuple(d.strings("ago_joined_words", [], items="non-blank")),
                   weekdays=tuple(w.lower() for w in weekdays), weekday_prepositions=preps,
                   weekday_before_today=before,
                   weekday_joined_prefixes=tuple(d.strings("weekday_joined_prefixes", [], items="non-blank")),
                   weekdays_joined=tuple(joined),
                   weekday_joined_sunday=tuple(d.strings("weekday_joined_sunday", [], items="non-blank")),
                   weekday_back=back, weekday_this=tuple(d.strings("weekday_this", [], items="non-blank")))


def _numbers(d: RuleReader) -> dict[str, int]:
    t = d.table("numbers", {})
    out = {}
    for word in t.data:
        value = t.get(word)
        if not (isinstance(value, int) and 0 < value <= 1000):
            raise t.fail(word, f"must be a whole number from 1 to 1000, not {value!r}")
        out[str(word).lower()] = value
    return out


@dataclass(frozen=True)
class Window:
    """[start, end): the exact time named; `slack` widens it for a half-weight match."""
    start: datetime
    end: datetime
    slack: timedelta
    phrase: str

    def weight(self, at: datetime | None) -> float:
        if at is None:
            return 0.0
        if self.start <= at < self.end:
            return 1.0
        if self.start - self.slack <= at < self.end + self.slack:
            return 0.5
        return 0.0

    @property
    def outer(self) -> tuple[datetime, datetime]:
        return self.start - self.slack, self.end + self.slack


def _day(at: datetime) -> datetime:
    return at.replace(hour=0, minute=0, second=0, microsecond=0)


def _latest(month: int, day: int, now: datetime) -> datetime | None:
    """The latest `month`/`day` at or before today (this year's, else last year's)."""
    for year in (now.year, now.year - 1):
        try:
            at = datetime(year, month, day)
        except ValueError:
            continue
        if at <= _day(now):
            return at
    return None


def _month_end(at: datetime) -> datetime:
    return datetime(at.year + (at.month == 12), at.month % 12 + 1, 1)


@lru_cache(maxsize=8)
def _relative_pattern(phrases: tuple[str, ...]) -> re.Pattern[str] | None:
    ordered = sorted(phrases, key=lambda p: (-len(p), p))
    parts = [re.escape(p) if not p.isascii() else rf"\b{re.escape(p)}\b" for p in ordered]
    return re.compile("|".join(parts)) if parts else None


def find(query: str, now: datetime, rules: DateRules) -> tuple[list[Window], str]:
    """The windows a query names and the query with their words taken out."""
    low = text = query.lower()
    out: list[Window] = []
    slack = timedelta(days=rules.slack_days)
    spans: list[tuple[int, int]] = []

    def take(m: re.Match[str], window: Window | None) -> None:
        if window is not None:
            out.append(window)
            spans.append(m.span())

    month_names = {name: i + 1 for i, name in enumerate(rules.months)}
    month_names.update({name: i + 1 for i, name in enumerate(rules.month_abbreviations)})
    names = "|".join(sorted(map(re.escape, month_names), key=len, reverse=True))
    # ISO dates first, then "December 4, 2023" / "4 December 2023" / "December 2023" / "12月4日".
    patterns: list[tuple[re.Pattern[str], Any]] = [
        (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"),
         lambda m: (int(m.group(1)), int(m.group(2)), int(m.group(3)))),
        (re.compile(rf"\b({names})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}})\b)?"),
         lambda m: (int(m.group(3)) if m.group(3) else None, month_names[m.group(1)], int(m.group(2)))),
        (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({names})\b\.?(?:,?\s+(\d{{4}})\b)?"),
         lambda m: (int(m.group(3)) if m.group(3) else None, month_names[m.group(2)], int(m.group(1)))),
        (re.compile(rf"\b({names})\s+(?:of\s+)?(\d{{4}})\b"),
         lambda m: (int(m.group(2)), month_names[m.group(1)], None)),
        (re.compile(r"(?:(\d{4})年)?(\d{1,2})月(?:(\d{1,2})[日号])?"),
         lambda m: (int(m.group(1)) if m.group(1) else None, int(m.group(2)), int(m.group(3)) if m.group(3) else None)),
    ]
    if rules.month_prepositions:  # "in June", "during March": the month's latest occurrence (a bare "may" is a verb)
        full = "|".join(sorted(map(re.escape, rules.months), key=len, reverse=True))
        preps = "|".join(map(re.escape, rules.month_prepositions))
        patterns.append((re.compile(rf"\b(?:{preps})\s+({full})\b"), lambda m: (None, month_names[m.group(1)], None)))
    if rules.month_prepositions:  # "in 2023": the whole year (a bare number may be a port or an issue)
        preps = "|".join(map(re.escape, rules.month_prepositions))
        patterns.append((re.compile(rf"\b(?:{preps})\s+((?:19|20)\d{{2}})\b(?![-/.]\d)"),
                         lambda m: (int(m.group(1)), None, None)))
    for pattern, parts in patterns:
        for m in pattern.finditer(low):
            if any(a < m.end() and m.start() < b for a, b in spans):
                continue
            year, month, day = parts(m)
            if month is None:
                start = datetime(year, 1, 1)
                take(m, Window(start, datetime(year + 1, 1, 1), slack, m.group(0)))
                continue
            if not 1 <= month <= 12:
                continue
            try:
                if day is None:
                    start = datetime(year or now.year, month, 1)
                    if year is None and start > now:
                        start = datetime(now.year - 1, month, 1)
                    take(m, Window(start, _month_end(start), slack, m.group(0)))
                    continue
                start = datetime(year, month, day) if year else _latest(month, day, now)
            except ValueError:
                continue
            if start is not None:
                take(m, Window(start, start + timedelta(days=1), slack, m.group(0)))
    today = _day(now)
    for m, day in _weekdays(low, today, rules):  # before the relative phrases: 上周五 is a day, not 上周
        if not any(x < m.end() and m.start() < y for x, y in spans):
            take(m, Window(day, day + timedelta(days=1), slack, m.group(0)))
    relative = _relative_pattern(tuple(rules.relative))
    if relative is not None:  # one pattern for every phrase, longest first (a one-off search pays each compile)
        for m in relative.finditer(low):
            if not any(x < m.end() and m.start() < y for x, y in spans):
                a, b = rules.relative[m.group(0)]
                take(m, Window(today + timedelta(days=a), today + timedelta(days=b), timedelta(0), m.group(0)))
    if rules.ago_words or rules.ago_joined_words:
        units = ({u: 1 for u in rules.day_units} | {u: 7 for u in rules.week_units}
                 | {u: 30 for u in rules.month_units} | {u: 365 for u in rules.year_units})
        numbers = rules.numbers or {}
        count = "|".join([r"\d+", *map(re.escape, sorted(numbers, key=len, reverse=True))])
        unit = "|".join(map(re.escape, sorted(units, key=len, reverse=True)))
        forms = []
        if rules.ago_words:
            forms.append(rf"\b({count})\s+({unit})\s+(?:{'|'.join(map(re.escape, rules.ago_words))})\b")
        if rules.ago_joined_words:  # no word boundary inside CJK text: "三天前数据库" reads as a time and a word
            forms.append(rf"({count})\s*({unit})\s*(?:{'|'.join(map(re.escape, rules.ago_joined_words))})")
        for m in (m for form in forms for m in re.finditer(form, low)):
            if any(x < m.end() and m.start() < y for x, y in spans):
                continue
            n = int(m.group(1)) if m.group(1).isdigit() else numbers[m.group(1)]
            days = n * units[m.group(2)]
            span = units[m.group(2)]
            start = today - timedelta(days=days)
            take(m, Window(start, start + timedelta(days=span), timedelta(days=max(1, span // 2)), m.group(0)))
    for a, b in sorted(spans, reverse=True):
        text = text[:a] + " " + text[b:]
    return out, " ".join(text.split())


def _weekdays(low: str, today: datetime, rules: DateRules) -> list[tuple[re.Match[str], datetime]]:
    """"on Friday", "last Friday", "周五", "上周五": (the words, the day they name)."""
    out = []
    if rules.weekdays and rules.weekday_prepositions:
        names = "|".join(map(re.escape, rules.weekdays))
        preps = "|".join(map(re.escape, rules.weekday_prepositions))
        for m in re.finditer(rf"\b({preps})\s+({names})\b", low):
            wanted = rules.weekdays.index(m.group(2))
            back = (today.weekday() - wanted) % 7 or (7 if m.group(1) in rules.weekday_before_today else 0)
            out.append((m, today - timedelta(days=back)))
    if rules.weekdays_joined and rules.weekday_joined_prefixes:
        days = {d: i for i, d in enumerate(rules.weekdays_joined)} | {d: 6 for d in rules.weekday_joined_sunday}
        prefixes = "|".join(map(re.escape, sorted(rules.weekday_joined_prefixes, key=len, reverse=True)))
        marks = f"((?:{re.escape(rules.weekday_back)})*)" if rules.weekday_back else "()"
        this = f"(?:{'|'.join(map(re.escape, rules.weekday_this))})?" if rules.weekday_this else ""
        for m in re.finditer(rf"{marks}{this}(?:{prefixes})({'|'.join(map(re.escape, days))})", low):
            weeks = len(m.group(1)) // max(1, len(rules.weekday_back))
            if weeks:  # that day of a past calendar week, Monday to Sunday
                day = today - timedelta(days=today.weekday() + 7 * weeks) + timedelta(days=days[m.group(2)])
            else:  # its latest occurrence up to today
                day = today - timedelta(days=(today.weekday() - days[m.group(2)]) % 7)
            out.append((m, day))
    return out


def weight(windows: list[Window], at: datetime | None) -> float:
    return max((w.weight(at) for w in windows), default=0.0)
