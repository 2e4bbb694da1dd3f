// Graph queries (issue 3): `kg graph query`, `kg graph path`, `kg graph explain`. Used by kg/graph/queries.py.
// Only the six knowledge edge types count as graph edges here (other tables point at nodes too).

// name: graph_count_kinds
MATCH (n:Node) RETURN n.kind AS kind, count(*) AS n

// name: graph_count_edges
MATCH (:Node)-[r:caused_by|led_to|supports|contradicts|related_to|derived_from]->(:Node)
RETURN label(r) AS type, count(*) AS n

// name: graph_nodes_all
// Every node of one kind, oldest first, at most $limit.
MATCH (n:Node) WHERE n.kind = $kind
RETURN n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.text AS text, n.tags AS tags,
       n.status AS status, n.pattern_key AS pattern_key, n.created_at AS created_at
ORDER BY n.created_at, n.id
LIMIT $limit

// name: graph_nodes_matching
// Start nodes of a query: a kind or entry type (`type:T`), or a tag (`tag:X`).
MATCH (n:Node)
WHERE ($type <> '' AND (n.kind = $type OR n.entry_type = $type)) OR ($tag <> '' AND list_contains(n.tags, $tag))
RETURN n.id AS id
ORDER BY n.created_at, n.id
LIMIT $limit

// name: graph_nodes
// One node by primary key. Run once per id (kg.store.bulk.run_each): in kuzu 0.11.3 `WHERE n.id IN $ids`
// and `UNWIND $ids ... {id: i}` scan the whole table instead of the primary-key index.
MATCH (n:Node {id: $id})
RETURN n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.text AS text, n.tags AS tags,
       n.status AS status, n.pattern_key AS pattern_key, n.created_at AS created_at

// name: graph_neighbours
// One breadth-first step from one node, both directions (once per frontier node: see graph_nodes).
MATCH (a:Node {id: $id})-[:caused_by|led_to|supports|contradicts|related_to|derived_from]-(b:Node)
RETURN DISTINCT b.id AS id

// name: graph_edges_from
// One node's outgoing knowledge edges (once per node: see graph_nodes); the caller keeps those whose other
// end is in its result.
MATCH (a:Node {id: $id})-[r:caused_by|led_to|supports|contradicts|related_to|derived_from]->(b:Node)
RETURN a.id AS src, b.id AS dst, label(r) AS type, r.manual AS manual, r.score AS score, r.reason AS reason,
       r.created_at AS created_at

// name: graph_edges_every
MATCH (a:Node)-[r:caused_by|led_to|supports|contradicts|related_to|derived_from]->(b:Node)
RETURN a.id AS src, b.id AS dst, label(r) AS type, r.manual AS manual, r.score AS score, r.reason AS reason,
       r.created_at AS created_at
ORDER BY created_at, src, dst, type
LIMIT $limit

// name: graph_path
// A shortest chain between two nodes, edges taken in either direction (an event is linked *from* the lesson
// it caused, and that lesson led to a principle).
MATCH p = (a:Node {id: $src})-[:caused_by|led_to|supports|contradicts|related_to|derived_from* SHORTEST 1..12]-(b:Node {id: $dst})
RETURN nodes(p) AS nodes, rels(p) AS rels
LIMIT 1

// name: graph_path
// dialect: falkordb
// FalkorDB's shortestPath() takes directed paths only; its SPpaths procedure walks both directions.
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
CALL algo.SPpaths({sourceNode: a, targetNode: b, relTypes: ['caused_by', 'led_to', 'supports', 'contradicts',
  'related_to', 'derived_from'], maxLen: 12, relDirection: 'both', pathCount: 1}) YIELD path
RETURN nodes(path) AS nodes, relationships(path) AS rels
LIMIT 1

// name: graph_explain
// Every knowledge edge of a node, both directions, with how and why it was made.
MATCH (n:Node {id: $id})-[r:caused_by|led_to|supports|contradicts|related_to|derived_from]->(m:Node)
RETURN 'out' AS direction, label(r) AS type, m.id AS other, m.kind AS other_kind, m.text AS other_text,
       r.created_at AS created_at, r.manual AS manual, r.score AS score, r.reason AS reason
UNION ALL
MATCH (n:Node {id: $id})<-[r:caused_by|led_to|supports|contradicts|related_to|derived_from]-(m:Node)
RETURN 'in' AS direction, label(r) AS type, m.id AS other, m.kind AS other_kind, m.text AS other_text,
       r.created_at AS created_at, r.manual AS manual, r.score AS score, r.reason AS reason

// name: nodes_time_bounds
// The newest and oldest creation times (answered from the column's statistics, not a scan).
MATCH (n:Node)
RETURN max(n.created_at) AS hi, min(n.created_at) AS lo

// name: nodes_newest
// `kg list`: the newest nodes matching the filters, created at or after $since, ids and times only (the
// listed rows are read by key after: kg.store.bulk.newest).
MATCH (n:Node)
WHERE n.created_at >= $since
  AND ($kind IS NULL OR n.kind = $kind)
  AND ($entry_type IS NULL OR n.entry_type = $entry_type)
  AND ($status IS NULL OR n.status = $status)
  AND ($priority IS NULL OR n.priority = $priority)
  AND ($area IS NULL OR n.area = $area)
RETURN n.id AS id, n.created_at AS created_at
ORDER BY created_at DESC, id DESC
LIMIT $limit

// name: nodes_newest_any
// `kg list` with no filter: nodes_newest testing the time alone (each filter of nodes_newest reads its column
// for every node, even when unset: ~5 ms per 100k nodes each).
MATCH (n:Node)
WHERE n.created_at >= $since
RETURN n.id AS id, n.created_at AS created_at
ORDER BY created_at DESC, id DESC
LIMIT $limit

// name: nodes_list_row
// One listed node's columns, by primary key.
MATCH (n:Node {id: $id})
RETURN n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.text AS text, n.status AS status,
       n.priority AS priority, n.area AS area, n.category AS category, n.session AS session,
       n.pattern_key AS pattern_key, n.created_at AS created_at

// name: pending_high_newest
// `kg status`: the newest pending entries at these priorities, ids only (see nodes_newest).
MATCH (n:Node)
WHERE n.created_at >= $since AND n.kind = 'event' AND n.status = 'pending' AND n.priority IN $priorities
RETURN n.id AS id, n.created_at AS created_at
ORDER BY created_at DESC, id DESC
LIMIT $limit

// name: pending_high_row
MATCH (n:Node {id: $id})
RETURN n.id AS id, n.text AS text, n.priority AS priority, n.area AS area, n.created_at AS created_at
