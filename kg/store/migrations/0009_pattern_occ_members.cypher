// Issue 22: each PatternOcc row names its members, so the events of a pattern inside a window (`kg status`,
// the session brief: the ten patterns they show; `lc_window_events_of`) are found from the row's times and
// read by key, instead of following every member edge and reading eleven columns of each member (~24 ms per
// pattern at 1M events). `ev` holds the counted members' ids, aligned with `at`; `xev` the event members the
// table does not count (tagged exit-code-only), usually none. Filled by the rebuild this migration asks for
// (the flag below is cleared, so the next writer rebuilds every aggregate), then kept with the row.
ALTER TABLE PatternOcc ADD ev STRING[];
ALTER TABLE PatternOcc ADD xev STRING[];
MATCH (m:Meta {key: 'aggregate:occurrences'}) DELETE m;
