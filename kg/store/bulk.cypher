// name: bulk_present
// Which of a batch of ids are nodes: one scan of the id column joined by hash with the batch (an
// `IN $ids` filter compares every row with every item of the list: rows × items).
UNWIND $ids AS i
MATCH (n:Node)
WHERE n.id = i
RETURN n.id AS id

// name: bulk_with_pattern
// Which of a batch of events already belong to a pattern (resuming an interrupted import).
UNWIND $ids AS i
MATCH (p:Node)-[:derived_from]->(e:Node)
WHERE e.id = i AND p.kind = 'pattern'
RETURN DISTINCT e.id AS id

// name: bulk_with_pattern
// dialect: falkordb
// FalkorDB starts this match from an index scan of every event (n.kind) and walks back; a WITH makes it
// start from the one node found by key.
UNWIND $ids AS i
MATCH (e:Node {id: i})
WITH e
MATCH (p:Node)-[:derived_from]->(e)
WHERE p.kind = 'pattern'
RETURN DISTINCT e.id AS id

// name: bulk_pattern_keys
// Every pattern's key and id, live patterns last so that they win over merged tombstones.
MATCH (p:Node)
WHERE p.kind = 'pattern' AND coalesce(p.pattern_key, '') <> ''
RETURN p.pattern_key AS key, p.id AS id, p.status = 'merged' AS merged
ORDER BY merged DESC, p.created_at, p.id

// name: bulk_node_count
MATCH (n:Node) RETURN count(n) AS n

// name: bulk_out_caused_by
// One node's outgoing caused_by edges, by primary key (one statement per node: see bulk.run_each).
MATCH (a:Node {id: $id})-[:caused_by]->(b:Node)
RETURN a.id AS src, b.id AS dst

// name: bulk_out_led_to
// One node's outgoing led_to edges, by primary key (one statement per node: see bulk.run_each).
MATCH (a:Node {id: $id})-[:led_to]->(b:Node)
RETURN a.id AS src, b.id AS dst

// name: bulk_out_supports
// One node's outgoing supports edges, by primary key (one statement per node: see bulk.run_each).
MATCH (a:Node {id: $id})-[:supports]->(b:Node)
RETURN a.id AS src, b.id AS dst

// name: bulk_out_contradicts
// One node's outgoing contradicts edges, by primary key (one statement per node: see bulk.run_each).
MATCH (a:Node {id: $id})-[:contradicts]->(b:Node)
RETURN a.id AS src, b.id AS dst

// name: bulk_out_related_to
// One node's outgoing related_to edges, by primary key (one statement per node: see bulk.run_each).
MATCH (a:Node {id: $id})-[:related_to]->(b:Node)
RETURN a.id AS src, b.id AS dst

// name: bulk_out_derived_from
// One node's outgoing derived_from edges, by primary key (one statement per node: see bulk.run_each).
MATCH (a:Node {id: $id})-[:derived_from]->(b:Node)
RETURN a.id AS src, b.id AS dst

// name: bulk_pattern_degrees
// Every pattern's number of derived_from edges: an upper bound of its recurrence (merged patterns point
// at patterns too), read without touching the members' columns (5x cheaper than pattern_stats_all).
MATCH (p:Node)-[r:derived_from]->()
WHERE p.kind = 'pattern'
RETURN p.id AS id, count(r) AS n
ORDER BY n DESC, id

// name: trail_terms_all
// The whole keyword table (a row per distinct keyword), for an import to add its counts to (kg/ingest/trail_terms.py).
MATCH (x:Term) RETURN x.term AS term, x.df AS df

// name: bulk_loaded_events
// A batch of events already in the graph, as a resumed import needs them: the session, and the pattern link
// the killed run may not have made (kg/ingest/importing.py). One scan of the id column, as bulk_present.
UNWIND $ids AS i
MATCH (n:Node)
WHERE n.id = i AND n.kind = 'event'
RETURN n.id AS id, n.session AS session, n.created_at AS created_at, n.pattern_key AS key, n.id AS event,
       n.created_at AS at, n.text AS text, n.area AS area, n.priority AS priority

// name: trail_changes
// Every applied change with the rule node it wrote and the pattern it came from, for the trail (what was
// written where: `kg why` and reverts need it after the graph is rebuilt from the trail).
MATCH (c:Change)
OPTIONAL MATCH (c)-[:change_applies]->(n:Node)
OPTIONAL MATCH (c)-[:change_pattern]->(p:Node)
RETURN c, n.id AS rule, p.id AS pattern
ORDER BY c.applied_at, c.id

// name: trail_meta
// The lifecycle's rows kept in Meta (proposals, decisions, kg's marked blocks), for the trail.
MATCH (m:Meta)
WHERE m.kind IN $kinds
RETURN m
ORDER BY m.key

// name: trail_meta_about
// What the proposals and decisions are about (their edges to nodes and to changes), for the trail.
MATCH (m:Meta)-[r:proposal_about|decision_about]->(n:Node)
RETURN m.key AS key, n.id AS id, 'about' AS type
UNION ALL
MATCH (m:Meta)-[:proposal_change]->(c:Change)
RETURN m.key AS key, c.id AS id, 'change' AS type

// name: trail_changes_present
// Which of these changes the graph holds (a trail imported again loads none twice).
UNWIND $ids AS i
MATCH (c:Change)
WHERE c.id = i
RETURN c.id AS id

// name: trail_lifecycle_count
// Whether the graph holds a lifecycle of its own: an import takes a trail's lifecycle only into a graph without one.
MATCH (c:Change) RETURN count(c) AS n

// name: trail_change_stamps
// These changes as the graph holds them, by what makes a change the one it is: a change of another workspace's
// trail whose id this graph holds is the same change only when applied at the same time to the same text.
UNWIND $ids AS i
MATCH (c:Change)
WHERE c.id = i
RETURN c.id AS id, c.applied_at AS applied_at, c.target AS target, c.text AS text

// name: trail_meta_stamps
// The same for proposals and decisions (the same record only when made at the same time, of the same text or pair)
// and blocks (written at the same time with the same hash).
UNWIND $keys AS k
MATCH (m:Meta)
WHERE m.key = k
RETURN m.key AS key, CASE WHEN m.kind = 'block' THEN m.updated_at ELSE m.created_at END AS at, m.hash AS hash,
       m.text AS text, m.a AS a, m.b AS b

// name: trail_change_links
// The edges these changes have to their rule and pattern: an import killed between loading the changes and their
// edges resumes with the changes present, and loads the edges they lack.
UNWIND $ids AS i
MATCH (c:Change)-[:change_applies]->(n:Node)
WHERE c.id = i
RETURN c.id AS src, n.id AS dst, 'change_applies' AS type
UNION ALL
UNWIND $ids AS i
MATCH (c:Change)-[:change_pattern]->(n:Node)
WHERE c.id = i
RETURN c.id AS src, n.id AS dst, 'change_pattern' AS type

// name: trail_meta_links
// The edges these proposals and decisions have (to the nodes they are about, to their changes), for the same
// resume.
UNWIND $keys AS k
MATCH (m:Meta)-[:proposal_about|decision_about]->(n:Node)
WHERE m.key = k
RETURN m.key AS src, n.id AS dst
UNION ALL
UNWIND $keys AS k
MATCH (m:Meta)-[:proposal_change]->(c:Change)
WHERE m.key = k
RETURN m.key AS src, c.id AS dst

// name: trail_meta_present
UNWIND $keys AS k
MATCH (m:Meta)
WHERE m.key = k
RETURN m.key AS key

// name: bulk_stamps
// A batch of ids that are nodes, with their text and when each was made: is an imported entry whose id one of
// them holds that node (a trail imported again) or another entry (kg/ingest/import_renames.py)?
UNWIND $ids AS i
MATCH (n:Node)
WHERE n.id = i
RETURN n.id AS id, n.text AS text, n.created_at AS created_at

// name: bulk_nodes_by_text
// The entries and knowledge nodes (not patterns) holding one of these texts: an imported one kept under a new id
// by an earlier import (of this graph, or of the graph its trail rebuilt) is found there, not renamed again. One
// scan, joined by hash.
UNWIND $texts AS t
MATCH (n:Node)
WHERE n.kind <> 'pattern' AND n.text = t
RETURN n.id AS id, n.text AS text, n.created_at AS created_at
