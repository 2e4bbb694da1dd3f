// Issue 22: the spans of time during which each pattern is ready to promote (kg/store/spans.py, migration 0010).

// name: spn_clear_of
// One pattern's spans, before they are written again (by key, then its row's edges).
MATCH (a:PatternOcc {id: $id})-[s:ready_span]->(:Node) DELETE s

// name: spn_add
// One pattern's spans, written in one statement (both endpoints by key).
MATCH (a:PatternOcc {id: $id}), (p:Node {id: $id})
UNWIND $spans AS x
CREATE (a)-[:ready_span {opens: x.opens, closes: x.closes, n: x.n, sessions: x.sessions, last: x.last}]->(p)

// name: spn_count
// How many patterns of these statuses are ready at $now: counted by Kùzu, nothing returned per pattern. The hint
// and the pattern's own test after WITH make Kùzu read the node table at the spans' nodes only (a semi-mask);
// left to itself it scanned the whole node table to join it (105,600 rows at 100k entries; and at 15k, with few
// spans, it started from the node table).
MATCH (a:PatternOcc)-[s:ready_span]->(p:Node)
WHERE s.opens <= $now AND s.closes > $now
HINT (a JOIN s) JOIN p
WITH p WHERE p.kind = 'pattern' AND p.status IN $statuses
RETURN count(*) AS n

// name: spn_count
// dialect: falkordb
MATCH (a:PatternOcc)-[s:ready_span]->(p:Node)
WHERE s.opens <= $now AND s.closes > $now
WITH p WHERE p.kind = 'pattern' AND p.status IN $statuses
RETURN count(*) AS n

// name: spn_top
// The first $limit of them in `promote.rank`'s order: high impact first (a recurrence of $high_n or more, or a
// priority in $high_p), then recurrence, then the latest.
MATCH (a:PatternOcc)-[s:ready_span]->(p:Node)
WHERE s.opens <= $now AND s.closes > $now
HINT (a JOIN s) JOIN p
WITH a, s, p WHERE p.kind = 'pattern' AND p.status IN $statuses
RETURN a.id AS id, p.priority AS priority, s.n AS recurrence, s.sessions AS sessions, s.last AS last_seen,
       CASE WHEN s.n >= $high_n OR p.priority IN $high_p THEN 0 ELSE 1 END AS low
ORDER BY low, recurrence DESC, last_seen DESC, id
LIMIT $limit

// name: spn_top
// dialect: falkordb
MATCH (a:PatternOcc)-[s:ready_span]->(p:Node)
WHERE s.opens <= $now AND s.closes > $now
WITH a, s, p WHERE p.kind = 'pattern' AND p.status IN $statuses
RETURN a.id AS id, p.priority AS priority, s.n AS recurrence, s.sessions AS sessions, s.last AS last_seen,
       CASE WHEN s.n >= $high_n OR p.priority IN $high_p THEN 0 ELSE 1 END AS low
ORDER BY low, recurrence DESC, last_seen DESC, id
LIMIT $limit

// name: spn_of
// One pattern's span holding $now, by key (a pattern some proposal is about: it may not be shown).
MATCH (a:PatternOcc {id: $id})-[s:ready_span]->(p:Node)
WHERE s.opens <= $now AND s.closes > $now AND p.kind = 'pattern' AND p.status IN $statuses
RETURN a.id AS id, s.last AS last_seen

// name: spn_all
// Every span, for `kg doctor`'s comparison with a recomputation.
MATCH (a:PatternOcc)-[s:ready_span]->(p:Node)
RETURN a.id AS id, p.id AS node, s.opens AS opens, s.closes AS closes, s.n AS n, s.sessions AS sessions,
       s.last AS last

// name: spn_fingerprint
MATCH (m:Meta {key: 'aggregate:ready_spans'}) RETURN m.value AS value

// name: spn_fingerprint_set
MERGE (m:Meta {key: 'aggregate:ready_spans'}) SET m.value = $value
