// Auto-linking and near-duplicate patterns (issue 3). Used by kg/graph/linking.py and kg/graph/patterns.py.

// name: link_node
// One node as the linking decisions see it. An event's pattern_key names the pattern it belongs to.
MATCH (n:Node {id: $id})
RETURN n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.category AS category, n.area AS area,
       n.text AS text, n.created_at AS created_at, n.pattern_key AS pattern_key

// name: link_candidates
// Candidates for a new node: the full-text index queried with its rarest terms (never a scan).
// (Joining each candidate's pattern here doubled the time at 100k nodes: an event's pattern_key says it.)
CALL QUERY_FTS_INDEX('Node', 'node_fts', $q, top := $k)
RETURN node.id AS id, node.kind AS kind, node.entry_type AS entry_type, node.category AS category,
       node.area AS area, node.text AS text, node.created_at AS created_at, node.pattern_key AS pattern_key,
       score
ORDER BY score DESC, id

// name: link_candidates
// dialect: falkordb
// RediSearch reads `a b` as "both"; Kùzu's index as "either": the terms are joined with `|`. No `top`
// argument: ranked here, then limited.
CALL db.idx.fulltext.queryNodes('Node', replace($q, ' ', '|')) YIELD node, score
RETURN node.id AS id, node.kind AS kind, node.entry_type AS entry_type, node.category AS category,
       node.area AS area, node.text AS text, node.created_at AS created_at, node.pattern_key AS pattern_key,
       score
ORDER BY score DESC, id
LIMIT $k

// name: link_neighbours
// Every node already joined to this one, by any knowledge edge in either direction.
MATCH (n:Node {id: $id})-[:caused_by|led_to|supports|contradicts|related_to|derived_from]-(m:Node)
RETURN DISTINCT m.id AS other

// name: link_terms_df
// Document frequency of one keyword ('#docs': the node count). One lookup per term on purpose: in kuzu
// 0.11.3 `UNWIND $list ... MATCH (x {key: item})` does not use the primary-key index (a scan: 9 ms at 27k
// terms against 0.25 ms per lookup).
MATCH (x:Term {term: $term})
RETURN x.df AS df

// name: link_terms_df_many
// The counts of many keywords at once (a scan of the table: worth it only for many; see kg/graph/term_counts.py).
UNWIND $terms AS t
MATCH (x:Term {term: t})
RETURN x.term AS term, x.df AS df

// name: link_terms_clear
MATCH (x:Term) DELETE x

// name: link_terms_load
UNWIND $rows AS r
CREATE (:Term {term: r.term, df: r.df})

// name: link_all_texts
// Every node's text, to recount the keyword table.
MATCH (n:Node) RETURN n.text AS text

// name: link_add_caused_by
// One auto edge of type caused_by, with its score and its reason. One statement per edge: in kuzu 0.11.3
// `UNWIND $rows ... MATCH (a:Node {id: r.src})` scans the node table (1.1 s at 100k nodes, 1.3 ms here).
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
CREATE (a)-[:caused_by {created_at: $at, manual: false, score: $score, reason: $reason}]->(b)

// name: link_add_led_to
// One auto edge of type led_to, with its score and its reason. One statement per edge: in kuzu 0.11.3
// `UNWIND $rows ... MATCH (a:Node {id: r.src})` scans the node table (1.1 s at 100k nodes, 1.3 ms here).
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
CREATE (a)-[:led_to {created_at: $at, manual: false, score: $score, reason: $reason}]->(b)

// name: link_add_supports
// One auto edge of type supports, with its score and its reason. One statement per edge: in kuzu 0.11.3
// `UNWIND $rows ... MATCH (a:Node {id: r.src})` scans the node table (1.1 s at 100k nodes, 1.3 ms here).
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
CREATE (a)-[:supports {created_at: $at, manual: false, score: $score, reason: $reason}]->(b)

// name: link_add_contradicts
// One auto edge of type contradicts, with its score and its reason. One statement per edge: in kuzu 0.11.3
// `UNWIND $rows ... MATCH (a:Node {id: r.src})` scans the node table (1.1 s at 100k nodes, 1.3 ms here).
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
CREATE (a)-[:contradicts {created_at: $at, manual: false, score: $score, reason: $reason}]->(b)

// name: link_add_related_to
// One auto edge of type related_to, with its score and its reason. One statement per edge: in kuzu 0.11.3
// `UNWIND $rows ... MATCH (a:Node {id: r.src})` scans the node table (1.1 s at 100k nodes, 1.3 ms here).
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
CREATE (a)-[:related_to {created_at: $at, manual: false, score: $score, reason: $reason}]->(b)

// name: link_add_related_to_2
// A new node's related_to edges to 2 others in one statement (kg/graph/linking.py: inside a batch whose
// caller keeps the counts, kg/ingest/upkeep.py): one lookup of the node instead of one per edge, one
// statement instead of 2 (a bulk log's entries mostly get max_links of them).
MATCH (a:Node {id: $src}), (b0:Node {id: $dst0}), (b1:Node {id: $dst1})
CREATE (a)-[:related_to {created_at: $at, manual: false, score: $score0, reason: $reason0}]->(b0),
       (a)-[:related_to {created_at: $at, manual: false, score: $score1, reason: $reason1}]->(b1)

// name: link_add_related_to_3
// As link_add_related_to_2, to 3 others.
MATCH (a:Node {id: $src}), (b0:Node {id: $dst0}), (b1:Node {id: $dst1}), (b2:Node {id: $dst2})
CREATE (a)-[:related_to {created_at: $at, manual: false, score: $score0, reason: $reason0}]->(b0),
       (a)-[:related_to {created_at: $at, manual: false, score: $score1, reason: $reason1}]->(b1),
       (a)-[:related_to {created_at: $at, manual: false, score: $score2, reason: $reason2}]->(b2)

// name: link_add_related_to_4
// As link_add_related_to_2, to 4 others.
MATCH (a:Node {id: $src}), (b0:Node {id: $dst0}), (b1:Node {id: $dst1}), (b2:Node {id: $dst2}), (b3:Node {id: $dst3})
CREATE (a)-[:related_to {created_at: $at, manual: false, score: $score0, reason: $reason0}]->(b0),
       (a)-[:related_to {created_at: $at, manual: false, score: $score1, reason: $reason1}]->(b1),
       (a)-[:related_to {created_at: $at, manual: false, score: $score2, reason: $reason2}]->(b2),
       (a)-[:related_to {created_at: $at, manual: false, score: $score3, reason: $reason3}]->(b3)

// name: link_add_related_to_5
// As link_add_related_to_2, to 5 others.
MATCH (a:Node {id: $src}), (b0:Node {id: $dst0}), (b1:Node {id: $dst1}), (b2:Node {id: $dst2}), (b3:Node {id: $dst3}), (b4:Node {id: $dst4})
CREATE (a)-[:related_to {created_at: $at, manual: false, score: $score0, reason: $reason0}]->(b0),
       (a)-[:related_to {created_at: $at, manual: false, score: $score1, reason: $reason1}]->(b1),
       (a)-[:related_to {created_at: $at, manual: false, score: $score2, reason: $reason2}]->(b2),
       (a)-[:related_to {created_at: $at, manual: false, score: $score3, reason: $reason3}]->(b3),
       (a)-[:related_to {created_at: $at, manual: false, score: $score4, reason: $reason4}]->(b4)

// name: pattern_of_event
// The pattern an event belongs to.
MATCH (p:Node)-[:derived_from]->(e:Node {id: $id})
WHERE p.kind = 'pattern'
RETURN p.id AS id, p.pattern_key AS key
ORDER BY id
LIMIT 1

// name: pattern_of_event
// dialect: falkordb
// FalkorDB starts this match from an index scan of every event (n.kind) and walks back; a WITH makes it
// start from the one node found by key.
MATCH (e:Node {id: $id})
WITH e
MATCH (p:Node)-[:derived_from]->(e)
WHERE p.kind = 'pattern'
RETURN p.id AS id, p.pattern_key AS key
ORDER BY id
LIMIT 1

// name: pattern_event_set_key
// An event that joined a pattern carries its key, as if it had named it (null: it left its pattern).
MATCH (e:Node {id: $id})
WHERE e.kind = 'event'
SET e.pattern_key = $key, e.updated_at = $at

// name: pattern_get
// A pattern by id or by key (a merged pattern is a tombstone that points at the pattern it went into).
MATCH (p:Node)
WHERE p.kind = 'pattern' AND (p.id = $ref OR p.pattern_key = $ref)
OPTIONAL MATCH (p)<-[:derived_from]-(into:Node)
WHERE into.kind = 'pattern'
RETURN p.id AS id, p.pattern_key AS key, p.text AS text, p.status AS status, p.area AS area,
       into.id AS merged_into
ORDER BY id

// name: pattern_members
MATCH (p:Node {id: $id})-[d:derived_from]->(e:Node)
WHERE e.kind = 'event'
RETURN e.id AS id, e.text AS text, e.entry_type AS entry_type, e.area AS area, e.session AS session,
       e.created_at AS created_at, d.reason AS reason, d.manual AS manual
ORDER BY created_at, id

// name: pattern_move_members
// Move these member events from one pattern to another (merge, split).
MATCH (src:Node {id: $src})-[d:derived_from]->(e:Node)
WHERE e.id IN $ids
DELETE d

// name: pattern_add_member
// An event joins a pattern (one statement per event: see link_add_related_to). The pattern is reinforced when
// kg learned the event (its `reinforced_at`: an imported or reflected entry's is the import's time, not its own
// older one), so a first cycle after an import of old history does not expire the patterns made from it.
MATCH (p:Node {id: $pattern}), (e:Node {id: $event})
MERGE (p)-[d:derived_from]->(e)
ON CREATE SET d.created_at = $at, d.manual = $manual, d.score = $score, d.reason = $reason
WITH p, e, CASE WHEN e.reinforced_at IS NULL OR e.reinforced_at < e.created_at THEN e.created_at
                ELSE e.reinforced_at END AS learned
SET p.reinforced_at = CASE WHEN p.reinforced_at IS NULL OR p.reinforced_at < learned
                           THEN learned ELSE p.reinforced_at END,
    p.updated_at = $at

// name: pattern_add_new_member
// An event created in this same transaction joins a pattern. It has no edges yet, so CREATE replaces MERGE,
// whose edge check costs 5.5 ms at 100k events against 1.7 ms.
MATCH (p:Node {id: $pattern}), (e:Node {id: $event})
CREATE (p)-[:derived_from {created_at: $at, manual: $manual, score: $score, reason: $reason}]->(e)
WITH p, e, CASE WHEN e.reinforced_at IS NULL OR e.reinforced_at < e.created_at THEN e.created_at
                ELSE e.reinforced_at END AS learned
SET p.reinforced_at = CASE WHEN p.reinforced_at IS NULL OR p.reinforced_at < learned
                           THEN learned ELSE p.reinforced_at END,
    p.updated_at = $at

// name: pattern_retire
// A merged pattern stays as a tombstone: status 'merged', pointed at by the pattern it went into, so its key
// still finds the live pattern.
MATCH (a:Node {id: $into}), (b:Node {id: $id})
SET b.status = 'merged', b.updated_at = $at
MERGE (a)-[d:derived_from]->(b)
ON CREATE SET d.created_at = $at, d.manual = true, d.score = 1.0, d.reason = $reason

// name: pattern_list
// Patterns with recurrence, distinct sessions, first and last seen (derived from member events), with
// their area. Two grouping stages: see pattern_stats.
MATCH (p:Node)-[:derived_from]->(e:Node)
WHERE p.kind = 'pattern' AND e.kind = 'event' AND p.status <> 'merged'
WITH p, e.session AS s, count(e) AS n, min(e.created_at) AS a, max(e.created_at) AS b
WITH p, CAST(sum(n) AS INT64) AS recurrence, count(s) AS sessions, min(a) AS first_seen, max(b) AS last_seen
WHERE recurrence >= $min_recurrence
RETURN p.id AS id, p.pattern_key AS key, p.text AS text, p.status AS status, p.area AS area,
       recurrence, sessions, first_seen, last_seen
ORDER BY recurrence DESC, last_seen DESC, id
LIMIT $limit


// name: link_terms_set
// A keyword's count, written by key (kg/graph/term_counts.py: MERGE scans the table in kuzu 0.11.3).
MATCH (x:Term {term: $term})
SET x.df = $df

// name: link_terms_set_many
// Many keywords' counts in one statement: a scan of the table in kuzu 0.11.3 (see link_terms_df), cheaper than
// a lookup by key per keyword only while the table is small beside them (kg/graph/term_counts.py).
UNWIND $rows AS r
MATCH (x:Term {term: r.term})
SET x.df = r.df

// name: link_terms_size
// How many keywords the table holds.
MATCH (x:Term)
RETURN count(x) AS n

// Edges added by hand (`kg link add`, kg/ingest/writes.py edge_add), one query per type (a label cannot be a
// parameter). Named so that Store.run keeps the aggregates in the write's transaction (kg/store/tallies.py
// and, for derived_from, kg/store/aggregates.py WATCH); inline Cypher would clear their flag and make the next
// writer rebuild them all (seconds at 1M events).

// name: edge_add_caused_by
// One manual edge of type caused_by.
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
CREATE (a)-[:caused_by {created_at: $at, manual: true, score: 1.0, reason: $reason}]->(b)

// name: edge_add_led_to
// One manual edge of type led_to.
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
CREATE (a)-[:led_to {created_at: $at, manual: true, score: 1.0, reason: $reason}]->(b)

// name: edge_add_supports
// One manual edge of type supports.
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
CREATE (a)-[:supports {created_at: $at, manual: true, score: 1.0, reason: $reason}]->(b)

// name: edge_add_contradicts
// One manual edge of type contradicts.
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
CREATE (a)-[:contradicts {created_at: $at, manual: true, score: 1.0, reason: $reason}]->(b)

// name: edge_add_related_to
// One manual edge of type related_to.
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
CREATE (a)-[:related_to {created_at: $at, manual: true, score: 1.0, reason: $reason}]->(b)

// name: edge_add_derived_from
// One manual edge of type derived_from.
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
CREATE (a)-[:derived_from {created_at: $at, manual: true, score: 1.0, reason: $reason}]->(b)
