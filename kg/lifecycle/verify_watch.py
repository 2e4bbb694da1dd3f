"""When kg was watching a workspace: from its first event, less the spells in which nothing at all was logged. Pure.

A rule's rate before is occurrences / days watched (`verify.evidence`). History reflected or ingested with its
own dates (a transcript from last year) starts the clock weeks before kg was installed, and the weeks between
that history and kg's first own session hold no event of any kind: nobody was watching, yet counted as days
without the pattern they make its rate before look low, and a rule that changed nothing then reads "made worse"
and is reverted (issue 16). A spell of more than `verification.unobserved_gap_days` from one day with anything
logged (any event, any pattern, a session's start or end) to the next is not watched: its days are left out of
every exposure a verdict counts, before the change, after it, in a check and in a relapse (`days_watched`): left
in after the change, such a spell read as days with the rule and without the mistake and confirmed a rule that
changed nothing; inside a check, as the rate without the rule, "0 in 14.0d", and reverted one as made worse (QA1).
Shorter breaks are a workspace's rhythm (weekends, a holiday; the real aider histories in /work/shared/data have
up to 12 days between sessions) and count on every side.

The spells travel with `observed_from` as a `Watched` (a datetime, the first event, that also carries them), so
every caller that passes the start on (the verdicts, the rate prior, the promotion gate of
`kg.lifecycle.verify_wait`) sees the same exposure.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, timedelta

DAY = timedelta(days=1)


class Watched(datetime):
    """When kg started watching (the datetime itself) and the spells it was not (`gaps`, each [start, end) at
    midnights). Arithmetic on it gives a plain datetime; only `verify.evidence` reads `gaps`."""

    gaps: tuple[tuple[datetime, datetime], ...] = ()


def watched(first: datetime, days: Iterable[date | str], gap_days: float, now: datetime | None = None) -> datetime:
    """`first` with the unwatched spells among `days` (the distinct days with anything logged) attached; `first`
    itself when there are none or `gap_days` is 0 (off). `now` closes the last spell: the days since the last one
    with anything logged are not watched either once they are more than `gap_days`, so the promotion gate (which
    asks at `now`) and a later verdict (which sees the spell closed by the next event) count the same days; a
    burst followed by silence does not earn its 14 days watched by the silence. Such an open spell ends at `now`,
    not at the midnight before it, when nothing is logged that day either: the hours of today before the cycle are
    no more watched than the days before them (a check ending on a holiday counted them as the rate without its
    rule)."""
    days = [_day(d) for d in days if d is not None]
    spells = unwatched([*days, *([now] if now is not None else [])], gap_days)
    if spells and now is not None and spells[-1][1] == datetime.combine(now.date(), datetime.min.time()) \
            and now.date() not in days:
        spells[-1] = (spells[-1][0], max(now, spells[-1][1]))
    if not spells:
        return first
    w = Watched(first.year, first.month, first.day, first.hour, first.minute, first.second, first.microsecond,
                first.tzinfo)
    w.gaps = tuple(spells)
    return w


def unwatched(days: Iterable[date | str], gap_days: float) -> list[tuple[datetime, datetime]]:
    """The spells between two days with anything logged that are more than `gap_days` apart: from the midnight
    after the earlier day to the midnight that starts the later one (the whole days with nothing logged)."""
    if gap_days <= 0:
        return []
    seen = sorted({_day(d) for d in days if d is not None})
    out = []
    for a, b in zip(seen, seen[1:], strict=False):
        if (b - a).days > gap_days:
            out.append((datetime.combine(a, datetime.min.time()) + DAY, datetime.combine(b, datetime.min.time())))
    return out


def gaps(observed_from: datetime | None) -> list[tuple[datetime, datetime]]:
    """The unwatched spells `observed_from` carries (none for a plain datetime or None)."""
    return list(getattr(observed_from, "gaps", ()))


def days_watched(a: datetime, b: datetime, spells: Iterable[tuple[datetime, datetime]]) -> float:
    """The days from `a` to `b` less those inside the unwatched `spells` (disjoint, as `unwatched` makes them)."""
    if b <= a:
        return 0.0
    out = (b - a).total_seconds()
    for s, e in spells:
        if min(b, e) > max(a, s):
            out -= (min(b, e) - max(a, s)).total_seconds()
    return out / 86400


def _day(d: date | str | datetime) -> date:
    if isinstance(d, datetime):
        return d.date()
    if isinstance(d, date):
        return d
    return date.fromisoformat(str(d)[:10])
