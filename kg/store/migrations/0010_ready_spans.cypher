// Issue 22: when each pattern is ready to promote. `kg status` and the session brief counted and ranked every
// pattern ready at `now` in Python (4,899 rows read and tested at 100k entries, 585 at 10k: their cost grew
// with the graph's window, not with the ten they show). A pattern's figures inside the promotion window
// (recurrence, sessions, last seen) change only when one of its events enters or leaves the window, so the
// spans of `now` during which it is ready are kept, each with its figures and its pattern's id, status and
// priority, as edges from its PatternOcc row to its node (a relationship table: no primary-key index, ~0 MB
// to open). Kùzu counts the spans that hold `now` and returns the first few in rank order from this table
// alone (kg/store/spans.py): reading the patterns' own columns cost 0.19 s at 1M entries. Kept with PatternOcc in the same
// transaction; built after this migration (the flag below is cleared, so the next writer rebuilds every
// aggregate), after an import and by `kg doctor --repair`.
CREATE REL TABLE IF NOT EXISTS ready_span(FROM PatternOcc TO Node, opens TIMESTAMP, closes TIMESTAMP, n INT64, sessions INT64, last TIMESTAMP, pid STRING, status STRING, priority STRING);
MATCH (m:Meta {key: 'aggregate:occurrences'}) DELETE m;
