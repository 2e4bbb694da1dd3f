"""Redaction speed: 1 MB of real transcripts and a typical 200-character summary, medians of 7 runs.

    .venv/bin/python bench/redact_speed.py

Baseline in the same run: a single `str.replace` pass over the same text (the cheapest possible scan).
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

from kg.redact import load_default

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("KG_SHARED_DATA", REPO.parent / "shared" / "data"))


def median_time(func, runs: int = 7) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    redactor = load_default()
    parts = [p.read_text(encoding="utf-8", errors="replace")
             for p in sorted((DATA / "transcripts").rglob("*")) if p.is_file() and p.suffix != ".gz"]
    parts.append((DATA / "locomo" / "locomo_dev.json").read_text(encoding="utf-8"))
    text = "".join(parts)[:1_000_000]
    summary = ("Fixed the flaky login test: the password reset token expired after 5 minutes; commit 3f2a9c1 "
               "raised it to 15 and added a retry in tests/integration/test_auth.py (issue #412).")
    big = median_time(lambda: redactor.redact(text))
    big_base = median_time(lambda: text.replace("password", "password"))
    small = median_time(lambda: [redactor.redact(summary) for _ in range(2000)]) / 2000
    small_base = median_time(lambda: [summary.replace("password", "password") for _ in range(2000)]) / 2000
    print(f"{'case':<34} {'median':>12} {'baseline':>12} {'ratio':>8}")
    print(f"{'1 MB of real transcripts':<34} {big * 1e3:>9.1f} ms {big_base * 1e3:>9.2f} ms {big / big_base:>7.0f}x")
    print(f"{'200-char summary':<34} {small * 1e6:>9.1f} µs {small_base * 1e6:>9.2f} µs {small / small_base:>7.0f}x")
    print("targets: 1 MB < 100 ms; summary < 200 µs")


if __name__ == "__main__":
    main()
