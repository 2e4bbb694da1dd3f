// Issue 22: a maintained aggregate for "ready to promote". One row per pattern holding the times, sessions
// and statuses of its member events (kind event, not tagged exit-code-only), oldest first, with the first and
// last time; kept by kg.store.aggregates in the same transaction as every write that changes them, built
// after this migration, after an import and by `kg doctor --repair`. `Meta` key `aggregate:occurrences`
// says the table is complete; without it readers use the full query.
CREATE NODE TABLE IF NOT EXISTS PatternOcc(id STRING PRIMARY KEY, first TIMESTAMP, last TIMESTAMP, at TIMESTAMP[], sess STRING[], st STRING[]);
