// The five knowledge kinds share one node table: they share identity, text, lifecycle and the full-text
// index, and one table keeps id lookups, auto-link candidates and search to one index. `kind` says which of
// the five a node is; fields that only some kinds use are null elsewhere.
CREATE NODE TABLE Node(
    id STRING PRIMARY KEY,
    kind STRING,
    entry_type STRING,
    text STRING,
    details STRING,
    action STRING,
    category STRING,
    priority STRING,
    status STRING,
    area STRING,
    source STRING,
    pattern_key STRING,
    session STRING,
    files STRING[],
    tags STRING[],
    error_text STRING,
    context STRING,
    reproducible STRING,
    user_context STRING,
    complexity STRING,
    frequency STRING,
    redactions STRING[],
    created_at TIMESTAMP,
    updated_at TIMESTAMP,
    reinforced_at TIMESTAMP,
    pinned BOOLEAN,
    stale BOOLEAN,
    tokens STRING
);
CREATE REL TABLE caused_by(FROM Node TO Node, created_at TIMESTAMP, manual BOOLEAN, score DOUBLE, reason STRING);
CREATE REL TABLE led_to(FROM Node TO Node, created_at TIMESTAMP, manual BOOLEAN, score DOUBLE, reason STRING);
CREATE REL TABLE supports(FROM Node TO Node, created_at TIMESTAMP, manual BOOLEAN, score DOUBLE, reason STRING);
CREATE REL TABLE contradicts(FROM Node TO Node, created_at TIMESTAMP, manual BOOLEAN, score DOUBLE, reason STRING);
CREATE REL TABLE related_to(FROM Node TO Node, created_at TIMESTAMP, manual BOOLEAN, score DOUBLE, reason STRING);
CREATE REL TABLE derived_from(FROM Node TO Node, created_at TIMESTAMP, manual BOOLEAN, score DOUBLE, reason STRING);
CREATE NODE TABLE Session(id STRING PRIMARY KEY, started_at TIMESTAMP, ended_at TIMESTAMP, summary STRING, source STRING);
// Full-text index over normalised tokens: CJK text is split into character bigrams first, because Kùzu's
// tokenizer splits on whitespace only.
CALL CREATE_FTS_INDEX('Node', 'node_fts', ['tokens'], stemmer := 'porter');
