// Issue 22: each PatternOcc row is linked to its pattern's node, so the patterns ready to promote are read in
// one query whose cost follows their number (`agg_occ_window_fields`: the window's rows, then their patterns
// through the link; Kùzu scans only the linked nodes) instead of one lookup by key per candidate (~0.7 s for
// 446 candidates at 1M events). Made with the rows, in the same transaction; built after this migration (the
// flag below is cleared, so the next writer rebuilds every aggregate), after an import and by `kg doctor
// --repair`.
CREATE REL TABLE IF NOT EXISTS occ_of(FROM PatternOcc TO Node);
MATCH (m:Meta {key: 'aggregate:occurrences'}) DELETE m;
