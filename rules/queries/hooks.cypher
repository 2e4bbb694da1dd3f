// name: hooks_pending_high_count
// How many pending entries sit at the given priorities (`kg hook session-start` shows the newest few).
MATCH (n:Node)
WHERE n.kind = 'event' AND n.status = 'pending' AND n.priority IN $priorities
RETURN count(n) AS n

// name: hooks_watch
// Changes applied to the instruction files and still under verification, whose check is not due yet: the
// rules an agent should follow this session, because kg is measuring whether they work.
MATCH (c:Change)
WHERE c.status IN $statuses AND c.next_check > $now
RETURN c.id AS id, c.status AS status, c.target AS target, c.text AS text, c.next_check AS next_check,
       c.applied_at AS applied_at
ORDER BY c.next_check, c.id
LIMIT $limit

// name: hooks_watch_count
MATCH (c:Change)
WHERE c.status IN $statuses AND c.next_check > $now
RETURN count(c) AS n

// name: hooks_watch
// dialect: falkordb
// On a team graph, a change whose target's scope is "workspace" (a USER.md preference: rules/lifecycle.toml,
// $workspace_kinds) is watched only in the workspace whose cycle made it, where alone it is rendered
// (kg/lifecycle/render.py): another member's preference is no rule this member's agent follows.
MATCH (c:Change)
WHERE c.status IN $statuses AND c.next_check > $now
  AND (NOT c.target_kind IN $workspace_kinds OR c.workspace IS NULL OR c.workspace = $origin_workspace)
RETURN c.id AS id, c.status AS status, c.target AS target, c.text AS text, c.next_check AS next_check,
       c.applied_at AS applied_at
ORDER BY c.next_check, c.id
LIMIT $limit

// name: hooks_watch_count
// dialect: falkordb
MATCH (c:Change)
WHERE c.status IN $statuses AND c.next_check > $now
  AND (NOT c.target_kind IN $workspace_kinds OR c.workspace IS NULL OR c.workspace = $origin_workspace)
RETURN count(c) AS n

// name: hooks_counts
// Node and edge totals for the brief's stats line.
MATCH (n:Node)
RETURN count(n) AS nodes, CAST(sum(CASE WHEN n.kind = 'event' THEN 1 ELSE 0 END) AS INT64) AS entries

// name: hooks_pending_high_ids
// The newest pending entries at the given priorities, ids only: sorting only the id and date columns is
// twice as fast at 100k entries as sorting whole rows (texts included); the few texts come by key after.
MATCH (n:Node)
WHERE n.kind = 'event' AND n.status = 'pending' AND n.priority IN $priorities
RETURN n.id AS id
ORDER BY n.created_at DESC, n.id DESC
LIMIT $limit

// name: hooks_item
// One listed entry's text and priority, by key (a primary-key lookup: one statement per id).
MATCH (n:Node {id: $id})
RETURN n.id AS id, n.text AS text, n.priority AS priority

// name: hooks_edge_count
// The typed edges between nodes, for the brief's stats line: what `kg status`, `kg graph query` and
// `kg export graph` count as edges (not the lifecycle's links, nor the aggregate's occ_of and ready_span).
MATCH (:Node)-[r:caused_by|led_to|supports|contradicts|related_to|derived_from]->(:Node)
RETURN count(*) AS n

// name: reflect_logged
// The entries of the sessions a reflection killed mid-write was logging into (kg/reflect/apply.py
// `_logged_before`): its pending findings found here by what they say and when are not logged again. Asked only
// after such a kill; one scan (Kùzu 0.11.3 has no index on `session`).
MATCH (n:Node) WHERE n.session IN $sessions AND n.kind = 'event'
RETURN n.id AS id, n.session AS session, n.text AS text, n.details AS details, n.created_at AS created_at
ORDER BY id
