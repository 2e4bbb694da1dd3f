// Issue 22: the ranking of `kg status`'s "recurring patterns" (kg/store/aggregates.py). One row per pattern
// with an event among its members: how many (`n`) and the newest one's time (`last`), the order of
// `pattern_stats_all`. Kept with PatternOcc in the same transaction as every write that changes a pattern's
// members; built after this migration (the flag below is cleared, so the next writer rebuilds every
// aggregate), after an import and by `kg doctor --repair`.
CREATE NODE TABLE IF NOT EXISTS PatternRank(id STRING PRIMARY KEY, n INT64, last TIMESTAMP);
MATCH (m:Meta {key: 'aggregate:occurrences'}) DELETE m;
