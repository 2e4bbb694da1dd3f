// Memory search's graph-aware recall (kg/memory/expand.py). The other search queries are in memory.cypher.

// name: search_node
// One node's search fields by its primary key: the entries logged beside a best hit in its session are read
// one indexed statement each (a list of keys, `WHERE n.id IN $ids` or `UNWIND`, scans the table in Kùzu
// 0.11.3). The same in both dialects.
MATCH (n:Node {id: $id})
RETURN n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.text AS text, n.details AS details,
       n.category AS category, n.priority AS priority, n.status AS status, n.session AS session,
       n.tags AS tags, n.context AS context, n.pinned AS pinned, n.created_at AS created_at,
       n.reinforced_at AS reinforced_at

// name: search_node_state
// What of one node changes after it is created (priority, status, pinning, reinforcement), by its primary
// key: a search hit read from the side index (whose rows hold the rest as created) is brought up to date with
// these four columns (issue 17: ~0.2 ms a key at 1M nodes, against ~0.5 ms for every column of search_node).
MATCH (n:Node {id: $id})
RETURN n.id AS id, n.priority AS priority, n.status AS status, n.pinned AS pinned, n.reinforced_at AS reinforced_at

// name: search_session_members
// The entries of the best hits' sessions, ids and times only, to find what was logged beside each hit (one
// scan of two columns: Kùzu 0.11.3 has no index on `session`; the few rows search needs are then read by
// key). Patterns carry no session, so one column is tested (a `kind` test too cost a fifth more at 100k).
MATCH (n:Node) WHERE n.session IN $sessions
RETURN n.session AS session, n.created_at AS created_at, n.id AS id
ORDER BY session, created_at, id
LIMIT $limit
