// Issue 22: the pattern-occurrence aggregate (kg/store/aggregates.py, migration 0005).

// name: agg_occurrences_of
// One pattern's member events, by key. Tags are filtered and rows ordered in Python: this plain shape lets
// Kùzu read only the members' column chunks (~8-25 ms at 100k), where a list filter and an ORDER BY on the
// members made it 4-10x slower.
MATCH (p:Node {id: $id})-[:derived_from]->(e:Node)
WHERE e.kind = 'event'
RETURN e.id AS eid, e.created_at AS at, e.session AS session, e.status AS status, e.tags AS tags

// name: agg_occurrences_all
// Every pattern's member events (a full rebuild).
MATCH (p:Node)-[:derived_from]->(e:Node)
WHERE p.kind = 'pattern' AND e.kind = 'event'
RETURN p.id AS id, e.id AS eid, e.created_at AS at, e.session AS session, e.status AS status, e.tags AS tags

// name: agg_occ_new
// A row is never updated in place: a row written again is deleted and made anew (`aggregates.refresh`). Kùzu
// 0.11.3's CHECKPOINT of a SET on a row's lists, with a row made in the same checkpoint's span, wrote the new
// row's TIMESTAMP[] and STRING[] items from other rows (tests/integration/test_aggregate_checkpoint.py).
CREATE (:PatternOcc {id: $id, first: $first, last: $last, at: $at, sess: $sess, st: $st, ev: $ev, xev: $xev})

// name: agg_occ_members
// One row's members (migration 0009), by key: the times and ids of its counted members, and the event
// members it does not count. `ev` is null on a row written before the migration's rebuild.
MATCH (a:PatternOcc {id: $id}) RETURN a.at AS at, a.sess AS sess, a.ev AS ev, a.xev AS xev

// name: agg_event_in_window
// One member event's fields `lc_window_events_of` returns, with those its WHERE tests, by key.
MATCH (e:Node {id: $id})
RETURN e.id AS id, e.kind AS kind, e.status AS status, e.created_at AS created_at, e.category AS category,
       e.area AS area, e.entry_type AS entry_type, e.action AS action, e.tags AS tags, e.source AS source,
       e.priority AS priority, e.text AS text, e.session AS session

// name: agg_event_state
// What `agg_event_in_window` returns that the side index's row of the event does not hold (status and
// priority change; area, action and source are not in that file), by key: fewer columns, about half the cost.
MATCH (e:Node {id: $id})
RETURN e.id AS id, e.status AS status, e.area AS area, e.action AS action, e.source AS source,
       e.priority AS priority

// name: agg_occ_get
MATCH (a:PatternOcc {id: $id}) RETURN a.id AS id

// name: agg_occ_delete
MATCH (a:PatternOcc {id: $id}) DETACH DELETE a

// name: agg_occ_clear
MATCH (a:PatternOcc) DETACH DELETE a

// name: agg_occ_link
// A new row's link to its pattern (migration 0008), both by key.
MATCH (a:PatternOcc {id: $id}), (p:Node {id: $id})
CREATE (a)-[:occ_of]->(p)

// name: agg_occ_link_all
// Every row's link, after a rebuild's COPY: one hash join of the rows' ids with the node table's (a list of
// keys, or `MATCH (p:Node {id: a.id})`, would look each one up by scanning).
MATCH (a:PatternOcc), (p:Node)
WHERE a.id = p.id
CREATE (a)-[:occ_of]->(p)

// name: agg_occ_link_all
// dialect: falkordb
// The range index on Node.id answers the lookup per row.
MATCH (a:PatternOcc)
MATCH (p:Node {id: a.id})
CREATE (a)-[:occ_of]->(p)

// name: agg_occ_links
// Every row and the node it is linked to (none, or several, is a fault `kg doctor` reports).
MATCH (a:PatternOcc)
OPTIONAL MATCH (a)-[:occ_of]->(p:Node)
RETURN a.id AS id, p.id AS linked

// name: agg_occurrences_many
// Several patterns' member events (`refresh` of many: a decay pass's), a chunk of ids per statement: one hash
// join with the node table, where `agg_occurrences_of` per pattern cost ~3 ms each in the cycle's transaction.
UNWIND $ids AS i
MATCH (p:Node {id: i})-[:derived_from]->(e:Node)
WHERE e.kind = 'event'
RETURN i AS pid, e.id AS eid, e.created_at AS at, e.session AS session, e.status AS status, e.tags AS tags

// name: agg_rank_many
UNWIND $ids AS i MATCH (r:PatternRank {id: i}) RETURN r.id AS id, r.n AS n, r.last AS last

// name: agg_occ_ids_many
UNWIND $ids AS i MATCH (a:PatternOcc {id: i}) RETURN a.id AS id

// name: agg_occ_delete_many
// Rows written again (`agg_occ_new`: never SET), their links and spans with them.
UNWIND $ids AS i
MATCH (a:PatternOcc {id: i})
DETACH DELETE a

// name: agg_occ_new_many
// Rows made again, each linked to its pattern's node found by key (one hash join, as `agg_occurrences_many`).
UNWIND $rows AS r
MATCH (p:Node {id: r.id})
CREATE (a:PatternOcc {id: r.id, first: r.first, last: r.last, at: r.at, sess: r.sess, st: r.st, ev: r.ev,
                      xev: r.xev})-[:occ_of]->(p)

// name: agg_rank_get
MATCH (r:PatternRank {id: $id}) RETURN r.n AS n, r.last AS last

// name: agg_rank_set
MATCH (r:PatternRank {id: $id}) SET r.n = $n, r.last = $last

// name: agg_rank_new
CREATE (:PatternRank {id: $id, n: $n, last: $last})

// name: agg_rank_delete
MATCH (r:PatternRank {id: $id}) DELETE r

// name: agg_rank_clear
MATCH (r:PatternRank) DELETE r

// name: agg_rank_all
MATCH (r:PatternRank) RETURN r.id AS id, r.n AS n, r.last AS last ORDER BY id

// name: agg_rank_top
// The most recurring patterns, `pattern_stats_all`'s order: a sort of one small row per pattern.
MATCH (r:PatternRank)
RETURN r.id AS id
ORDER BY r.n DESC, r.last DESC, r.id
LIMIT $limit

// name: agg_occ_window_fields
// (issue 22) `at` comes as one text, parsed by `aggregates.times`: kuzu 0.11.3's Python binding never frees
// the items of a TIMESTAMP[] it returns (~1.6 MB per read of this table at 100k entries: a read server grew
// read after read), and one string per row is also built faster than a list of datetimes.
// The patterns that may have $min_recurrence counted events inside [since, now]: a scan of this small
// table's two time columns, then the `$min_recurrence`-th newest time (`at` is oldest first) must be in the
// window too (a pattern whose members spread over a year meets most windows by its span alone: 17,641 rows
// at 1M events, against 446 that pass both); Python counts. With each row its pattern's own fields, through
// the row's link (migration 0008): Kùzu follows the links of the rows that pass and reads the node table only
// at the linked nodes (a semi-mask), so the cost follows the candidates, not the graph (one lookup by key per
// candidate cost ~0.7 s for 446 at 1M). `id(p)` matches `agg_proposals_about`.
MATCH (a:PatternOcc)-[:occ_of]->(p:Node)
WHERE a.last >= $since AND a.first <= $now AND size(a.at) >= $min_recurrence
  AND a.at[size(a.at) - $min_recurrence + 1] >= $since
RETURN a.id AS id, CAST(a.at AS STRING) AS at, a.sess AS sess, a.st AS st, id(p) AS node, p.kind AS kind,
       p.status AS status, p.pattern_key AS key, p.text AS text, p.priority AS priority, p.area AS area

// name: agg_occ_window_figures
// `agg_occ_window_fields` without the patterns' key, text and area (`lc_promotion_figures`): the node table's
// text column is read only for the few ready patterns a status shows.
MATCH (a:PatternOcc)-[:occ_of]->(p:Node)
WHERE a.last >= $since AND a.first <= $now AND size(a.at) >= $min_recurrence
  AND a.at[size(a.at) - $min_recurrence + 1] >= $since
RETURN a.id AS id, CAST(a.at AS STRING) AS at, a.sess AS sess, a.st AS st, id(p) AS node, p.kind AS kind,
       p.status AS status, p.priority AS priority

// name: agg_occ_torn
// Rows whose lists disagree with their own times or each other (`aggregates.torn`): `at` is oldest first, so its
// first and last items are the row's `first` and `last`. One scan of the small table; Kùzu counts lists from 1.
MATCH (a:PatternOcc)
WHERE a.at[1] <> a.first OR a.at[size(a.at)] <> a.last OR size(a.sess) <> size(a.at) OR size(a.st) <> size(a.at)
   OR size(a.ev) <> size(a.at)
RETURN a.id AS id ORDER BY id

// name: agg_occ_all
MATCH (a:PatternOcc) RETURN a.id AS id, a.at AS at, a.sess AS sess, a.st AS st, a.ev AS ev, a.xev AS xev
ORDER BY id

// name: agg_pattern_live
// A candidate pattern's own fields and the proposals about it, by key (one row per proposal, or one with
// nulls).
MATCH (p:Node {id: $id})
OPTIONAL MATCH (q:Meta)-[:proposal_about]->(p)
RETURN p.id AS id, p.kind AS kind, p.status AS status, p.pattern_key AS key, p.text AS text,
       p.priority AS priority, p.area AS area, q.status AS q_status, q.decided_at AS q_decided

// name: agg_proposals_about
// Every proposal about a node, by the node's internal id: returning `p.id` would read the node table's id
// column whole (0.07 s at 1M nodes); `id(p)` costs as many proposals as there are, once the hint makes Kùzu
// start from the proposals (its own plan scanned every node: issue 22).
MATCH (q:Meta)-[r:proposal_about]->(p:Node)
HINT (q JOIN r) JOIN p
RETURN id(p) AS node, q.status AS q_status, q.decided_at AS q_decided

// name: agg_proposals_about
// dialect: falkordb
MATCH (q:Meta)-[:proposal_about]->(p:Node)
RETURN id(p) AS node, q.status AS q_status, q.decided_at AS q_decided

// name: agg_patterns_of_event
MATCH (p:Node)-[:derived_from]->(e:Node {id: $id}) WHERE p.kind = 'pattern' RETURN p.id AS id

// name: agg_patterns_of_change
MATCH (c:Change {id: $id})-[:change_pattern]->(p:Node) RETURN p.id AS id

// name: agg_patterns_of_staged
// The patterns of the events a decay pass is about to restage (lc_stage_apply joins LcStage) whose status it
// changes: a row holds its members' times, sessions, tags and statuses, and decay sets only the status of
// these (a first pass at 1M restages ~all events, and most keep their status: demoted, not expired).
MATCH (s:LcStage)
MATCH (p:Node)-[:derived_from]->(e:Node {id: s.id})
WHERE p.kind = 'pattern' AND e.kind = 'event' AND (e.status IS NULL OR e.status <> s.status)
RETURN DISTINCT p.id AS id

// name: agg_flag
MATCH (m:Meta {key: 'aggregate:occurrences'}) RETURN m.value AS value

// name: agg_flag_set
MERGE (m:Meta {key: 'aggregate:occurrences'}) SET m.value = $value

// name: agg_flag_clear
MATCH (m:Meta {key: 'aggregate:occurrences'}) DELETE m


// name: agg_pattern_fields
// A pattern's own fields `pattern_stats_by_id` returns, by key.
MATCH (p:Node {id: $id}) RETURN p.id AS id, p.pattern_key AS key, p.text AS text, p.status AS status

// name: agg_proposals_only
// `lc_proposals` without its two OPTIONAL MATCHes: Kùzu 0.11.3 answers `OPTIONAL MATCH (q)-[:proposal_about]->
// (n:Node)` with a hash join that reads the node table's id column whole (0.08 s at 1M nodes, with no proposal
// at all); the caller reads each proposal's node and change by key (`agg_proposal_links`).
MATCH (q:Meta)
WHERE q.kind = 'proposal' AND q.status IN $statuses
RETURN q.id AS id, q.number AS number, q.type AS type, q.target AS target, q.target_kind AS target_kind,
       q.change AS change, q.text AS text, q.hypothesis AS hypothesis, q.priority AS priority, q.area AS area,
       q.category AS category, q.motivation AS motivation, q.evidence AS evidence,
       q.risk AS risk, q.effort AS effort, q.impact AS impact, q.status AS status, q.reason AS reason,
       q.created_at AS created_at, q.decided_at AS decided_at
ORDER BY number

// name: agg_proposal_links
// One proposal's node and change, by key (as `lc_proposals`' OPTIONAL MATCHes: one row per pair, or nulls).
MATCH (q:Meta {key: $key})
OPTIONAL MATCH (q)-[:proposal_about]->(n:Node)
OPTIONAL MATCH (q)-[:proposal_change]->(c:Change)
RETURN n.id AS node, n.kind AS node_kind, c.id AS change_id
