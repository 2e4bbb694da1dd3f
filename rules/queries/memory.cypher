// name: memory_sessions_on_day
// Session ids of one day (YYYY-MM-DD-NNN), to number the next one.
MATCH (s:Session) WHERE s.id STARTS WITH $day RETURN s.id AS id

// name: memory_session_start
// summary '' until the end SETs it: a row made with a NULL after SETs in place tears the column at a CHECKPOINT
// (kuzu 0.11.3: kg/store/strings.py)
MERGE (s:Session {id: $id})
ON CREATE SET s.started_at = $at, s.source = $source, s.summary = ''
RETURN s.id AS id, s.started_at AS started_at, s.ended_at AS ended_at

// name: memory_session_get
MATCH (s:Session {id: $id})
RETURN s.id AS id, s.started_at AS started_at, s.ended_at AS ended_at, s.summary AS summary, s.source AS source

// name: memory_session_end
MATCH (s:Session {id: $id}) SET s.ended_at = $at, s.summary = $summary RETURN s.id AS id

// name: memory_session_nodes
// Everything logged in a session, oldest first.
MATCH (n:Node) WHERE n.session = $id
RETURN n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.category AS category, n.text AS text,
       n.status AS status, n.priority AS priority, n.source AS source, n.created_at AS created_at
ORDER BY n.created_at, n.id

// name: memory_session_skills
// Skills are Meta rows of kind 'skill' (migration 0011): `id` is the slug.
MATCH (k:Meta) WHERE k.kind = 'skill' AND k.session = $id RETURN k.id AS slug, k.name AS name, k.revisions AS revisions
ORDER BY slug

// name: memory_session_prefs
// Preferences are Meta rows of kind 'pref' (migration 0011): `pkey` is the preference's key, `id` the row's.
MATCH (p:Meta) WHERE p.kind = 'pref' AND p.session = $id
RETURN p.pkey AS key, p.value AS value, p.action AS action ORDER BY p.at, p.id

// name: memory_pref_add
CREATE (p:Meta {key: 'pref:' + $id, kind: 'pref', id: $id, pkey: $key, value: $value, previous: $previous,
                 action: $action, at: $at, source: $source, session: $session})

// name: memory_pref_history
// Every change, oldest first; `$key` = '' means all keys.
MATCH (p:Meta) WHERE p.kind = 'pref' AND ($key = '' OR p.pkey = $key)
RETURN p.id AS id, p.pkey AS key, p.value AS value, p.previous AS previous, p.action AS action, p.at AS at,
       p.source AS source, p.session AS session
ORDER BY p.at, p.id

// name: memory_score_add
// Scores are Meta rows of kind 'score' (migration 0011).
CREATE (s:Meta {key: 'score:' + $id, kind: 'score', id: $id, at: $at, accuracy: $a, usefulness: $u, efficiency: $e, tone: $t, proactiveness: $p,
                 average: $avg, notes: $notes, session: $session})

// name: memory_scores_since
MATCH (s:Meta) WHERE s.kind = 'score' AND s.at >= $since AND s.at <= $until
RETURN s.id AS id, s.at AS at, s.accuracy AS accuracy, s.usefulness AS usefulness, s.efficiency AS efficiency,
       s.tone AS tone, s.proactiveness AS proactiveness, s.average AS average, s.notes AS notes
ORDER BY s.at, s.id

// name: memory_skill_upsert
// `$key` is the row's whole key, 'skill:' + `$slug` (kg/store/schema.py `meta_key`): a key built in the pattern
// is not looked up in the primary-key index by kuzu 0.11.3 (it scans the table).
// Lists are never SET here: `lst_` columns name them, and the store makes such a row anew (kg/store/remake.py).
MERGE (k:Meta {key: $key})
ON CREATE SET k.kind = 'skill', k.id = $slug, k.created = $created, k.revisions = 0
SET k.name = $skill_name, k.description = $description, k.updated = $updated, k.source = $source,
    k.path = $path, k.session = $session, k.revisions = k.revisions + 1
RETURN k.id AS slug, k.revisions AS revisions, k.key AS lst_key, CAST($triggers AS STRING[]) AS lst_triggers,
       CAST($tools AS STRING[]) AS lst_tools

// name: memory_skill_upsert
// dialect: falkordb
// A team graph SETs the lists in place (the bug is kuzu 0.11.3's checkpoint).
MERGE (k:Meta {key: $key})
ON CREATE SET k.kind = 'skill', k.id = $slug, k.created = $created, k.revisions = 0
SET k.name = $skill_name, k.description = $description, k.updated = $updated, k.source = $source,
    k.triggers = $triggers, k.tools = $tools, k.path = $path, k.session = $session,
    k.revisions = k.revisions + 1
RETURN k.id AS slug, k.revisions AS revisions

// name: memory_skill_link
// A skill learned from these nodes (events, patterns, lessons).
UNWIND $ids AS i
MATCH (k:Meta {key: $key}), (n:Node {id: i})
MERGE (k)-[r:learned_from]->(n)
ON CREATE SET r.created_at = $at

// name: memory_fts
// Full-text candidates; `$q` holds the rarer query terms only (a term in most nodes makes this slow).
// The node's fields come back with the score: a second lookup by id costs more than the search.
CALL QUERY_FTS_INDEX('Node', 'node_fts', $q, top := $k)
WITH node AS n, score
RETURN n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.text AS text, n.details AS details,
       n.category AS category, n.priority AS priority, n.status AS status, n.session AS session,
       n.tags AS tags, n.context AS context, n.pinned AS pinned, n.created_at AS created_at,
       n.reinforced_at AS reinforced_at, score

// name: memory_fts
// dialect: falkordb
// As link_candidates' variant: any of the terms, best first, `$k` of them.
CALL db.idx.fulltext.queryNodes('Node', replace($q, ' ', '|')) YIELD node, score
WITH node AS n, score
ORDER BY score DESC, n.id
LIMIT $k
RETURN n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.text AS text, n.details AS details,
       n.category AS category, n.priority AS priority, n.status AS status, n.session AS session,
       n.tags AS tags, n.context AS context, n.pinned AS pinned, n.created_at AS created_at,
       n.reinforced_at AS reinforced_at, score

// name: memory_neighbours_of
// The nodes one edge away from one node, by its primary key (one statement per node: `UNWIND $ids ... MATCH
// (a {id: i})` ignores the key index and cost 0.6 s for 100 ids at 100k nodes; this costs ~2 ms). Pattern
// membership (derived_from) is left out: a pattern's members are not its neighbours, and a pattern reached
// from each of its events would crowd out the events it summarises. The hint keeps Kùzu starting from the
// node found by key: on the 100k workspace, after an agent logged one entry a third time, its own plan scanned
// the whole node table and joined it to the node's edges (~25-75 ms a statement, ten per search; issue 17).
MATCH (a:Node {id: $id})-[r:led_to|caused_by|related_to|supports|contradicts]-(n:Node)
HINT (a JOIN r) JOIN n
RETURN label(r) AS type, r.manual AS manual, r.score AS link_score, n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.text AS text, n.details AS details,
       n.category AS category, n.priority AS priority, n.status AS status, n.session AS session,
       n.tags AS tags, n.context AS context, n.pinned AS pinned, n.created_at AS created_at,
       n.reinforced_at AS reinforced_at
ORDER BY n.id, type
LIMIT $limit

// name: memory_neighbours_of
// dialect: falkordb
MATCH (a:Node {id: $id})-[r:led_to|caused_by|related_to|supports|contradicts]-(n:Node)
RETURN label(r) AS type, r.manual AS manual, r.score AS link_score, n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.text AS text, n.details AS details,
       n.category AS category, n.priority AS priority, n.status AS status, n.session AS session,
       n.tags AS tags, n.context AS context, n.pinned AS pinned, n.created_at AS created_at,
       n.reinforced_at AS reinforced_at
ORDER BY n.id, type
LIMIT $limit

// name: memory_neighbour_ids_of
// memory_neighbours_of's edges and the ids of the nodes at their other end, nothing else of those nodes: their
// rows come from the side index with their kept state (issue 17; reading every column of each neighbour was
// half of each statement's cost at 1M nodes). The same hint, order and limit.
MATCH (a:Node {id: $id})-[r:led_to|caused_by|related_to|supports|contradicts]-(n:Node)
HINT (a JOIN r) JOIN n
RETURN label(r) AS type, r.manual AS manual, r.score AS link_score, n.id AS id
ORDER BY n.id, type
LIMIT $limit

// name: memory_neighbour_ids_of
// dialect: falkordb
MATCH (a:Node {id: $id})-[r:led_to|caused_by|related_to|supports|contradicts]-(n:Node)
RETURN label(r) AS type, r.manual AS manual, r.score AS link_score, n.id AS id
ORDER BY n.id, type
LIMIT $limit

// name: memory_nodes_between
// Events and knowledge of a time window a query names (newest first), besides the full-text hits.
MATCH (n:Node) WHERE n.created_at >= $after AND n.created_at < $before AND n.kind <> 'pattern'
RETURN n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.text AS text, n.details AS details,
       n.category AS category, n.priority AS priority, n.status AS status, n.session AS session,
       n.tags AS tags, n.context AS context, n.pinned AS pinned, n.created_at AS created_at,
       n.reinforced_at AS reinforced_at
ORDER BY n.created_at DESC, n.id
LIMIT $limit

// name: memory_pattern_events
// The newest events of a pattern a query names by its key: they follow the pattern, whatever their words (a
// pattern's events in Chinese hold no word of `db.migration.index`).
MATCH (p:Node {id: $id})-[:derived_from]->(e:Node)
WHERE e.kind = 'event'
RETURN e.id AS id
ORDER BY e.created_at DESC, e.id
LIMIT $limit

// name: memory_recent
// The last resort of a query that finds nothing: the newest memory.
MATCH (n:Node) WHERE n.kind <> 'pattern'
RETURN n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.text AS text, n.details AS details,
       n.category AS category, n.priority AS priority, n.status AS status, n.session AS session,
       n.tags AS tags, n.context AS context, n.pinned AS pinned, n.created_at AS created_at,
       n.reinforced_at AS reinforced_at
ORDER BY n.created_at DESC, n.id
LIMIT $limit

// name: memory_terms_prefix
// Known keywords sharing a prefix, for a query term found nowhere (fuzzy relaxation).
MATCH (x:Term) WHERE x.term STARTS WITH $prefix AND x.df > 0
RETURN x.term AS term, x.df AS df

// name: memory_terms_around
// Known keywords holding a lone CJK character, for a query of one (the index holds CJK text as bigrams).
MATCH (x:Term) WHERE (x.term STARTS WITH $char OR x.term ENDS WITH $char) AND x.df > 0
RETURN x.term AS term, x.df AS df

// name: memory_node_count
MATCH (n:Node) RETURN count(n) AS n

// name: memory_all_tokens
// For the common-term list (`kg index build`): every node's index tokens.
MATCH (n:Node) RETURN n.tokens AS tokens

// name: memory_principles
// Principles kept in memory: not resolved, not stale; pinned and reinforced first.
MATCH (n:Node) WHERE n.kind = 'principle' AND (n.stale IS NULL OR n.stale = false)
  AND (n.status IS NULL OR NOT n.status IN ['resolved', 'wont_fix', 'reverted', 'retired'])
RETURN n.id AS id, n.text AS text, n.pinned AS pinned, n.created_at AS created_at,
       n.reinforced_at AS reinforced_at
ORDER BY n.pinned DESC, n.reinforced_at DESC, n.id
LIMIT $limit

// name: memory_watch
// The watch list: pending entries of these priorities, newest first.
MATCH (n:Node) WHERE n.kind = 'event' AND n.status = 'pending' AND n.priority IN $priorities
RETURN n.id AS id, n.text AS text, n.priority AS priority, n.entry_type AS entry_type, n.area AS area,
       n.created_at AS created_at, n.reinforced_at AS reinforced_at
ORDER BY n.created_at DESC, n.id DESC
LIMIT $limit

// name: memory_topics_reset
// Rebuilding the topic index replaces every `about` link.
MATCH (:Node)-[r:about]->(:Meta) DELETE r

// name: memory_topic_upsert
// Topics are Meta rows of kind 'topic' (migration 0011), keyed 'topic:' + their name; `id` is the name.
// Lists are never SET here: `lst_` columns name them, and the store makes such a row anew (kg/store/remake.py).
UNWIND $rows AS r
MERGE (t:Meta {key: 'topic:' + CAST(r.name AS STRING)})
SET t.kind = 'topic', t.id = r.name, t.built_at = $at
RETURN t.key AS lst_key, CAST(r.keywords AS STRING[]) AS lst_keywords

// name: memory_topic_upsert
// dialect: falkordb
// A team graph SETs the lists in place (the bug is kuzu 0.11.3's checkpoint).
UNWIND $rows AS r
MERGE (t:Meta {key: 'topic:' + CAST(r.name AS STRING)})
SET t.kind = 'topic', t.id = r.name, t.keywords = r.keywords, t.built_at = $at

// name: memory_topic_links
UNWIND $rows AS r
MATCH (n:Node {id: r.id}), (t:Meta {key: 'topic:' + CAST(r.topic AS STRING)})
CREATE (n)-[:about {score: r.score, created_at: $at}]->(t)

// name: memory_nodes_for_topics
// What the topic index reads: knowledge nodes still active.
MATCH (n:Node) WHERE n.status IS NULL OR NOT n.status IN ['wont_fix', 'reverted']
RETURN n.id AS id, n.text AS text, n.details AS details

// name: memory_topic_nodes
MATCH (n:Node)-[a:about]->(t:Meta {key: $key})
RETURN n.id AS id, n.kind AS kind, n.text AS text, n.priority AS priority, n.status AS status,
       n.created_at AS created_at, a.score AS score
ORDER BY a.score DESC, n.created_at DESC, n.id
LIMIT $limit

// name: memory_fts_ids
// Full-text candidates, ids and scores only (the in-process cache has the rest).
CALL QUERY_FTS_INDEX('Node', 'node_fts', $q, top := $k)
RETURN node.id AS id, score

// name: memory_fts_ids
// dialect: falkordb
CALL db.idx.fulltext.queryNodes('Node', replace($q, ' ', '|')) YIELD node, score
RETURN node.id AS id, score
ORDER BY score DESC, id
LIMIT $k

// name: memory_nodes_all
// Every node's search fields, for the in-process search cache.
MATCH (n:Node)
RETURN n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.text AS text, n.details AS details,
       n.category AS category, n.priority AS priority, n.status AS status, n.session AS session,
       n.tags AS tags, n.context AS context, n.pinned AS pinned, n.created_at AS created_at,
       n.reinforced_at AS reinforced_at, n.stale AS stale

// name: memory_edges_all
// Every edge search expands along (as memory_neighbours_of), for the in-process search cache.
MATCH (a:Node)-[r:led_to|caused_by|related_to|supports|contradicts]->(b:Node)
RETURN a.id AS src, b.id AS dst, r.manual AS manual, r.score AS link_score, label(r) AS type

// name: ingest_thread
// A conversation's thread: the turn `$src` led to the turn `$dst` (a fact of the transcript, not a guess, so
// manual). One statement per edge, by key; an auto edge found between the two already becomes this one.
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
MERGE (a)-[r:led_to]->(b)
ON CREATE SET r.created_at = $at, r.manual = true, r.score = 1.0, r.reason = $reason
ON MATCH SET r.manual = true, r.score = 1.0, r.reason = $reason
RETURN a.id AS id

// name: ingest_thread_new
// As ingest_thread, when `$dst` was just created and its auto-links made no led_to from `$src`: the edge is
// new, and CREATE skips MERGE's edge check (3.3 against 1.3 ms of CPU per turn).
MATCH (a:Node {id: $src}), (b:Node {id: $dst})
CREATE (a)-[:led_to {created_at: $at, manual: true, score: 1.0, reason: $reason}]->(b)
RETURN a.id AS id
