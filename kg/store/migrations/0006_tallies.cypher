// Issue 22: maintained counts for `kg status` (kg/store/tallies.py). `Tally` holds one row per (kind,
// entry_type, status) of Node and per type of edge leaving a Node; `PendingHigh` the pending events at high
// or critical priority, with their time. Kept in the same transaction as every write that changes them,
// built after this migration (the flag below is cleared, so the next writer rebuilds every aggregate), after
// an import and by `kg doctor`.
CREATE NODE TABLE IF NOT EXISTS Tally(key STRING PRIMARY KEY, n INT64);
CREATE NODE TABLE IF NOT EXISTS PendingHigh(id STRING PRIMARY KEY, at TIMESTAMP);
MATCH (m:Meta {key: 'aggregate:occurrences'}) DELETE m;
