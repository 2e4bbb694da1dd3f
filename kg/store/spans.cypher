// Issue 22: the spans of time during which each pattern is ready to promote (kg/store/spans.py, migration 0010).

// name: spn_add
// One pattern's spans, written in one statement (both endpoints by key), with its id, status and priority.
MATCH (a:PatternOcc {id: $id}), (p:Node {id: $id})
UNWIND $spans AS x
CREATE (a)-[:ready_span {opens: x.opens, closes: x.closes, n: x.n, sessions: x.sessions, last: x.last,
                         pid: $id, status: $status, priority: $priority}]->(p)

// name: spn_pattern
// A pattern's fields its spans carry, by key.
MATCH (p:Node {id: $id}) RETURN p.kind AS kind, p.status AS status, p.priority AS priority

// name: spn_patterns_all
// Every pattern's fields its spans carry (a rebuild).
MATCH (p:Node) WHERE p.kind = 'pattern' RETURN p.id AS id, p.status AS status, p.priority AS priority

// name: spn_staged_patterns
// The patterns among the nodes a decay pass is about to restage whose status or priority it changes (the
// spans copy those two; decay's other fields are in none).
MATCH (s:LcStage)
MATCH (p:Node {id: s.id})
WHERE p.kind = 'pattern' AND (p.status IS NULL OR p.status <> s.status OR p.priority IS NULL
                              OR p.priority <> s.priority)
RETURN p.id AS id

// name: spn_pattern_many
// Many patterns' fields their spans carry (a chunk of ids: one hash join with the node table).
UNWIND $ids AS i
MATCH (p:Node {id: i})
RETURN p.id AS id, p.kind AS kind, p.status AS status, p.priority AS priority

// name: spn_add_many
// Many patterns' spans, one row per span; the node through the row's link to it (occ_of, migration 0008):
// matching both endpoints by key from an UNWIND builds a cross product of the two tables in kuzu 0.11.3.
UNWIND $rows AS x
MATCH (a:PatternOcc {id: x.pid})-[:occ_of]->(p:Node)
CREATE (a)-[:ready_span {opens: x.opens, closes: x.closes, n: x.n, sessions: x.sessions, last: x.last,
                         pid: x.pid, status: x.status, priority: x.priority}]->(p)

// name: spn_count
// How many patterns of these statuses are ready at $now: counted by Kùzu from this table alone (the spans
// carry their pattern's status), nothing returned per pattern. The hint scans the spans from PatternOcc's
// side (one row per pattern): Kùzu's own plan scanned them from the node table's (1,054,097 rows at 1M
// entries, 0.19 s; 0.015 s so).
MATCH (a:PatternOcc)-[s:ready_span]->(p:Node)
WHERE s.opens <= $now AND s.closes > $now AND s.status IN $statuses
HINT (a JOIN s) JOIN p
RETURN count(*) AS n

// name: spn_count
// dialect: falkordb
MATCH ()-[s:ready_span]->()
WHERE s.opens <= $now AND s.closes > $now AND s.status IN $statuses
RETURN count(*) AS n

// name: spn_top
// The first $limit of them in `promote.rank`'s order: high impact first (a recurrence of $high_n or more, or a
// priority in $high_p), then recurrence, then the latest.
// (the hint as spn_count's)
MATCH (a:PatternOcc)-[s:ready_span]->(p:Node)
WHERE s.opens <= $now AND s.closes > $now AND s.status IN $statuses
HINT (a JOIN s) JOIN p
RETURN s.pid AS id, s.priority AS priority, s.n AS recurrence, s.sessions AS sessions, s.last AS last_seen,
       CASE WHEN s.n >= $high_n OR s.priority IN $high_p THEN 0 ELSE 1 END AS low
ORDER BY low, recurrence DESC, last_seen DESC, id
LIMIT $limit

// name: spn_top
// dialect: falkordb
MATCH ()-[s:ready_span]->()
WHERE s.opens <= $now AND s.closes > $now AND s.status IN $statuses
RETURN s.pid AS id, s.priority AS priority, s.n AS recurrence, s.sessions AS sessions, s.last AS last_seen,
       CASE WHEN s.n >= $high_n OR s.priority IN $high_p THEN 0 ELSE 1 END AS low
ORDER BY low, recurrence DESC, last_seen DESC, id
LIMIT $limit

// name: spn_of
// One pattern's span holding $now, by key (a pattern some proposal is about: it may not be shown).
MATCH (a:PatternOcc {id: $id})-[s:ready_span]->(:Node)
WHERE s.opens <= $now AND s.closes > $now AND s.status IN $statuses
RETURN s.pid AS id, s.last AS last_seen

// name: spn_all
// Every span with its pattern's own fields, for `kg doctor`'s comparison with a recomputation.
MATCH (a:PatternOcc)-[s:ready_span]->(p:Node)
RETURN a.id AS id, p.id AS node, s.pid AS pid, s.opens AS opens, s.closes AS closes, s.n AS n,
       s.sessions AS sessions, s.last AS last, s.status AS status, s.priority AS priority, p.kind AS kind,
       p.status AS node_status, p.priority AS node_priority

// name: spn_fingerprint
MATCH (m:Meta {key: 'aggregate:ready_spans'}) RETURN m.value AS value

// name: spn_fingerprint_set
MERGE (m:Meta {key: 'aggregate:ready_spans'}) SET m.value = $value
