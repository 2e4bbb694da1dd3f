"""Self-assessment scores (`kg score A U E T P`) and their per-day trends (`kg trends DAYS`), as in the seed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kg.core import clock
from kg.core.errors import UsageError
from kg.core.text import clean
from kg.memory._common import allocate
from kg.memory.rules import ScoreRules, memory_rules

DIMENSIONS = ("accuracy", "usefulness", "efficiency", "tone", "proactiveness")
SHORT = {"accuracy": "acc", "usefulness": "use", "efficiency": "eff", "tone": "ton", "proactiveness": "pro"}


def validate(values: list[Any], rules: ScoreRules) -> list[int]:
    """Five integers within the range; a message says which one is wrong. Pure."""
    if len(values) != len(DIMENSIONS):
        raise UsageError(f"give {len(DIMENSIONS)} scores (accuracy usefulness efficiency tone proactiveness), "
                         f"not {len(values)}")
    out = []
    for name, value in zip(DIMENSIONS, values, strict=True):
        try:
            number = int(str(value).strip())
        except ValueError:
            raise UsageError(f"{name} must be a whole number from {rules.min} to {rules.max}, "
                             f"not {value!r}") from None
        if not rules.min <= number <= rules.max:
            raise UsageError(f"{name} must be from {rules.min} to {rules.max}, not {number}")
        out.append(number)
    return out


def average(values: list[int]) -> float:
    return round(sum(values) / len(values), 1)


def record(ws: Any, values: list[Any], *, notes: str | None = None, now: datetime | str | None = None,
           session: str | None = None) -> dict[str, Any]:
    rules = memory_rules(ws).scores
    numbers = validate(values, rules)
    at = clock.now(now)
    text = clean(ws.rules.redactor.redact(notes or "").text, one_line=True)[:200] or None  # redacted before the cut
    avg = average(numbers)
    sid = allocate(ws, "SCR", at)
    with ws.store() as st:
        st.run("memory_score_add", id=sid, at=at, a=numbers[0], u=numbers[1], e=numbers[2], t=numbers[3],
               p=numbers[4], avg=avg, notes=text, session=session or ws.current_session())
    return {"id": sid, "date": f"{at:%Y-%m-%d}", "time": f"{at:%H:%M}",
            "scores": dict(zip(DIMENSIONS, numbers, strict=True)), "average": avg, "notes": text}


@dataclass(frozen=True)
class Trends:
    days: int
    count: int
    rows: list[dict[str, Any]]
    arrow: str | None
    first: float | None
    last: float | None

    def as_dict(self) -> dict[str, Any]:
        return {"days": self.days, "count": self.count, "rows": self.rows, "trend": self.arrow,
                "first": self.first, "last": self.last}


def arrow(first: float, last: float, threshold: float) -> str:
    delta = last - first
    return "↑" if delta > threshold else "↓" if delta < -threshold else "→"


def summarise(scores: list[dict[str, Any]], days: int, threshold: float) -> Trends:
    """Per day: the mean of that day's averages; the five columns show the day's first score (the seed's
    table). The arrow compares the last day's mean with the first's. Pure."""
    by_day: dict[str, list[dict[str, Any]]] = {}
    for s in sorted(scores, key=lambda s: (s["at"], s["id"])):
        by_day.setdefault(f"{s['at']:%Y-%m-%d}", []).append(s)
    rows = []
    for day, items in by_day.items():
        first = items[0]
        rows.append({"date": day, "avg": round(sum(i["average"] for i in items) / len(items), 2),
                     "n": len(items), **{SHORT[d]: first[d] for d in DIMENSIONS}})
    trend = first_avg = last_avg = None
    if len(rows) >= 2:
        first_avg, last_avg = rows[0]["avg"], rows[-1]["avg"]
        trend = arrow(first_avg, last_avg, threshold)
    return Trends(days, len(scores), rows, trend, first_avg, last_avg)


def trends(ws: Any, days: int, *, now: datetime | str | None = None) -> Trends:
    if days < 1:
        raise UsageError("DAYS must be at least 1")
    at = clock.now(now)
    since = datetime.combine((at - timedelta(days=days)).date(), datetime.min.time())
    with ws.store() as st:
        rows = st.run("memory_scores_since", since=since, until=at)
    return summarise(rows, days, memory_rules(ws).scores.trend_threshold)


def render_trends(t: dict[str, Any]) -> str:
    """The seed's `--trends` output, exactly."""
    if not t["count"]:
        return f"No scores in the last {t['days']} days."
    lines = ["", f"📈 Score Trends (last {t['days']} days, {t['count']} scores):", "",
             f"  {'Date':<12} {'Avg':>5} {'Acc':>4} {'Use':>4} {'Eff':>4} {'Ton':>4} {'Pro':>4}",
             "  " + "─" * 40]
    for r in t["rows"]:
        lines.append(f"  {r['date']:<12} {r['avg']:>5.1f} {r['acc']:>4} {r['use']:>4} {r['eff']:>4} "
                     f"{r['ton']:>4} {r['pro']:>4}")
    if t["trend"]:
        lines += ["", f"  Trend: {t['trend']} ({t['first']:.1f} → {t['last']:.1f})"]
    return "\n".join(lines)
