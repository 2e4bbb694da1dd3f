// name: nodes_existing
// Which of these ids are already in the graph (journal replay is idempotent by id).
MATCH (n:Node) WHERE n.id IN $ids RETURN n.id AS id

// name: node_exists
// One id by primary key (an `IN $list` or `UNWIND ... {id: r.id}` filter scans the table instead).
MATCH (n:Node {id: $id}) RETURN n.id AS id

// name: node_create
// One knowledge node. Created one statement per node: in kuzu 0.11.3 a multi-row `UNWIND ... CREATE` into a
// table with a full-text index leaves that index wrong for the rest of the process (correct after reopen).
// `reinforced_at` is `created_at`, or for an entry older than when kg learned it (a transcript's or an import's
// time) when kg learned it, so its age for decay counts from then (lifecycle.cypher lc_decay_candidates takes
// the later): one write, where a second statement set it after the create.
// pattern_key '' where the node has none, never NULL: linking SETs events' keys in place, and a node made with a
// NULL one tore the others' at a CHECKPOINT (kuzu 0.11.3); the store reads '' back as None (kg/store/strings.py).
CREATE (n:Node {id: $id, kind: $kind, entry_type: $entry_type, text: $text, details: $details,
  action: $action, category: $category, priority: $priority, status: $status, area: $area, source: $source,
  pattern_key: coalesce($pattern_key, ''), session: $session, files: $files, tags: $tags, error_text: $error_text,
  context: $context, reproducible: $reproducible, user_context: $user_context, complexity: $complexity,
  frequency: $frequency, redactions: $redactions, created_at: $created_at, updated_at: $created_at,
  reinforced_at: $reinforced_at, pinned: false, stale: false, tokens: $tokens})

// name: node_create
// dialect: falkordb
// On a team graph every node also names the workspace and agent it came from (bound by kg/store/falkor.py).
CREATE (n:Node {id: $id, kind: $kind, entry_type: $entry_type, text: $text, details: $details,
  action: $action, category: $category, priority: $priority, status: $status, area: $area, source: $source,
  pattern_key: $pattern_key, session: $session, files: $files, tags: $tags, error_text: $error_text,
  context: $context, reproducible: $reproducible, user_context: $user_context, complexity: $complexity,
  frequency: $frequency, redactions: $redactions, created_at: $created_at, updated_at: $created_at,
  reinforced_at: $reinforced_at, pinned: false, stale: false, tokens: $tokens,
  workspace: $origin_workspace, agent: $origin_agent})

// name: sessions_touch
// Sessions are made on first use; a later event never moves the start. summary '', never NULL (kg/store/strings.py).
UNWIND $rows AS r
MERGE (s:Session {id: r.id})
ON CREATE SET s.started_at = r.at, s.source = r.source, s.summary = ''

// name: patterns_by_key
MATCH (p:Node) WHERE p.kind = 'pattern' AND p.pattern_key IN $keys
RETURN p.id AS id, p.pattern_key AS key

// name: pattern_reinforce_bulk
// After a bulk load of member edges: each pattern's reinforcement is when kg learned its newest member (the
// later of the member's time and its `reinforced_at`, as pattern_add_member), unless it was reinforced later (a
// pattern a trail brings with its own state keeps it: promoted, reverted, pinned); updated_at by the members' time.
MATCH (p:Node)-[:derived_from]->(e:Node)
WHERE p.kind = 'pattern' AND e.kind = 'event'
WITH p, max(e.created_at) AS last, max(CASE WHEN e.reinforced_at IS NULL OR e.reinforced_at < e.created_at
                                           THEN e.created_at ELSE e.reinforced_at END) AS learned
SET p.reinforced_at = CASE WHEN p.reinforced_at IS NULL OR p.reinforced_at < learned THEN learned
                           ELSE p.reinforced_at END,
    p.updated_at = CASE WHEN p.updated_at IS NULL OR p.updated_at < last THEN last ELSE p.updated_at END

// name: pattern_stats
// Recurrence, distinct sessions, first and last seen of the patterns with these keys: derived from the
// member events, never stored. Two grouping stages on purpose: in kuzu 0.11.3 a DISTINCT aggregate beside
// other aggregates in one RETURN nulls them, and `$list IS NULL` on a list parameter crashes the process.
MATCH (p:Node)-[:derived_from]->(e:Node)
WHERE p.kind = 'pattern' AND e.kind = 'event' AND p.pattern_key IN $keys
WITH p, e.session AS s, count(e) AS n, min(e.created_at) AS a, max(e.created_at) AS b
RETURN p.id AS id, p.pattern_key AS key, p.text AS text, p.status AS status,
       CAST(sum(n) AS INT64) AS recurrence, count(s) AS sessions, min(a) AS first_seen, max(b) AS last_seen
ORDER BY recurrence DESC, last_seen DESC, id

// name: pattern_stats_by_id
// The same for one pattern, by its id: `pattern_stats` filters every pattern's edges by key (20 ms at 100k
// events); this starts from one pattern's members (7 ms). Kùzu 0.11.3 plans a one-statement
// "event -> its pattern -> the members" worse (19 ms), so the caller looks the pattern up first.
MATCH (p:Node {id: $id})-[:derived_from]->(e:Node)
WHERE e.kind = 'event'
WITH p, e.session AS s, count(e) AS n, min(e.created_at) AS a, max(e.created_at) AS b
RETURN p.id AS id, p.pattern_key AS key, p.text AS text, p.status AS status,
       CAST(sum(n) AS INT64) AS recurrence, count(s) AS sessions, min(a) AS first_seen, max(b) AS last_seen

// name: pattern_stats_all
// The same for every pattern.
MATCH (p:Node)-[:derived_from]->(e:Node)
WHERE p.kind = 'pattern' AND e.kind = 'event'
WITH p, e.session AS s, count(e) AS n, min(e.created_at) AS a, max(e.created_at) AS b
RETURN p.id AS id, p.pattern_key AS key, p.text AS text, p.status AS status,
       CAST(sum(n) AS INT64) AS recurrence, count(s) AS sessions, min(a) AS first_seen, max(b) AS last_seen
ORDER BY recurrence DESC, last_seen DESC, id
LIMIT $limit

// name: node_get
MATCH (n:Node {id: $id}) RETURN n

// name: node_edges
// Both directions, every edge type.
MATCH (n:Node {id: $id})-[r]->(m:Node)
RETURN 'out' AS direction, label(r) AS type, m.id AS other, m.kind AS other_kind, m.text AS other_text,
       r.created_at AS created_at, r.manual AS manual, r.score AS score, r.reason AS reason
UNION ALL
MATCH (n:Node {id: $id})<-[r]-(m:Node)
RETURN 'in' AS direction, label(r) AS type, m.id AS other, m.kind AS other_kind, m.text AS other_text,
       r.created_at AS created_at, r.manual AS manual, r.score AS score, r.reason AS reason

// name: count_by_kind
MATCH (n:Node) RETURN n.kind AS kind, n.entry_type AS entry_type, n.status AS status, count(*) AS n

// name: count_edges
// Every edge but the aggregate's links to their patterns (occ_of, migration 0008, and ready_span, migration 0010:
// bookkeeping, not knowledge).
MATCH ()-[r]->() WHERE label(r) <> 'occ_of' AND label(r) <> 'ready_span' RETURN label(r) AS type, count(*) AS n

// name: count_sessions
MATCH (s:Session) RETURN count(s) AS n

// name: pending_high
MATCH (n:Node)
WHERE n.kind = 'event' AND n.status = 'pending' AND n.priority IN $priorities
RETURN n.id AS id, n.text AS text, n.priority AS priority, n.area AS area, n.created_at AS created_at
ORDER BY n.created_at DESC, n.id DESC
LIMIT $limit

// name: status_set
MATCH (n:Node {id: $id}) SET n.status = $status, n.updated_at = $at RETURN n.id AS id

// name: status_close
// A person's status that closes a node (`kg resolve`: not one of the statuses decay ages). It clears decay's mark
// of an expiry (stage 3) in the same statement: the status is the person's now, and lc_decay_revive revives
// decay's expiries alone (an older kg's expiry, stage 3 and the expired status, is one).
MATCH (n:Node {id: $id})
SET n.status = $status, n.updated_at = $at,
    n.decay_stage = CASE WHEN n.decay_stage >= 3 THEN 0 ELSE n.decay_stage END
RETURN n.id AS id

// name: status_reopen
// A person's status that reopens a node (`kg resolve`: one of the statuses decay ages). On one decay expired
// (stage 3) it is a reinforcement by that person, as `kg reinforce` and a revival are, in the same statement:
// stage 0, not stale, its priority back to the base decay took it from, aged from now (else decay, which skips
// stage 3, never aged it again, nor restored it when it recurred).
MATCH (n:Node {id: $id})
WITH n, coalesce(n.decay_stage, 0) >= 3 AS expired
SET n.status = $status, n.updated_at = $at,
    n.decay_stage = CASE WHEN expired THEN 0 ELSE n.decay_stage END,
    n.stale = CASE WHEN expired THEN false ELSE n.stale END,
    n.priority = CASE WHEN expired AND n.base_priority IS NOT NULL THEN n.base_priority ELSE n.priority END,
    n.reinforced_at = CASE WHEN expired THEN $at ELSE n.reinforced_at END
RETURN n.id AS id

// name: nodes_all
// Every knowledge node, for export.
MATCH (n:Node) RETURN n ORDER BY n.created_at, n.id

// name: edges_all
MATCH (a:Node)-[r]->(b:Node)
RETURN a.id AS src, b.id AS dst, label(r) AS type, r.created_at AS created_at, r.manual AS manual,
       r.score AS score, r.reason AS reason
ORDER BY created_at, src, dst

// name: meta_get
MATCH (m:Meta {key: $key}) RETURN m.value AS value

// name: node_any
// One knowledge node, if the graph holds any (a new graph: none).
MATCH (n:Node) RETURN n.id AS id LIMIT 1

// name: meta_set
MERGE (m:Meta {key: $key}) SET m.value = $value

// name: pattern_has_key
// A remembered pattern id still names a pattern with this key (checked by primary key, no scan).
MATCH (p:Node {id: $id})
WHERE p.kind = 'pattern' AND p.pattern_key = $key
RETURN p.id AS id

// name: pattern_sources
// What points at a pattern with derived_from: the pattern it was merged into is among them. Filtered by
// kind in Python: a filter on `s.kind` here makes kuzu 0.11.3 scan the node table (8.6 ms against 0.6 ms).
MATCH (p:Node {id: $id})<-[:derived_from]-(s:Node)
RETURN s.id AS id, s.kind AS kind
ORDER BY id

// name: side_node_count
// The node count the side index's stamp is checked against on a read (kg/store/sideindex.py `_read_count`).
MATCH (n:Node) RETURN count(n) AS n
