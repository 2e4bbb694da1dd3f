// Issue 22: the counts of `kg status`, maintained (kg/store/tallies.py, migration 0006).

// name: tly_fields
// One node's counted fields, by key (before and after a watched write).
MATCH (n:Node {id: $id})
RETURN n.kind AS kind, n.entry_type AS entry_type, n.status AS status, n.priority AS priority,
       n.created_at AS at

// name: tly_member_shapes
// A pattern's members' counted fields (a status write on a pattern's occurrences changes no edge).
MATCH (p:Node {id: $id})-[:derived_from]->(e:Node)
RETURN e.id AS id, e.kind AS kind, e.entry_type AS entry_type, e.status AS status, e.priority AS priority,
       e.created_at AS at

// name: tly_change_nodes
// The rule node and the pattern of a change being reverted.
MATCH (c:Change {id: $id})-[:change_applies|:change_pattern]->(n:Node) RETURN DISTINCT n.id AS id

// name: tly_staged_fields
// The counted fields of the nodes a decay pass restages (before and after it): one hash join, as lc_decay_apply.
MATCH (s:LcStage), (n:Node)
WHERE n.id = s.id
RETURN n.id AS id, n.kind AS kind, n.entry_type AS entry_type, n.status AS status, n.priority AS priority,
       n.created_at AS at

// name: tly_all
// Tallies are Meta rows of kind 'tally' (migration 0011), keyed 'tally:' + their key; `id` is their key.
MATCH (t:Meta) WHERE t.kind = 'tally' RETURN t.id AS key, t.n AS n ORDER BY key

// name: tly_add
// `$key` is the row's whole key ('tally:' + `$id`, kg/store/tallies.py `add`): a key built in the pattern
// (`{key: 'tally:' + $id}`) is not looked up in the primary-key index by kuzu 0.11.3: it scans the table.
MERGE (t:Meta {key: $key}) ON CREATE SET t.kind = 'tally', t.id = $id, t.n = $d ON MATCH SET t.n = t.n + $d

// name: tly_clear
MATCH (t:Meta) WHERE t.kind = 'tally' DELETE t

// name: tly_high_add
// (after tly_high_drop when it was there: MERGE would scan the table in kuzu 0.11.3)
CREATE (:PendingHigh {id: $id, at: $at})

// name: tly_high_drop
MATCH (x:PendingHigh {id: $id}) DELETE x

// name: tly_high_drop_many
// A decay pass's demoted entries (a chunk of ids: one hash join with the table).
UNWIND $ids AS i
MATCH (x:PendingHigh {id: i})
DELETE x

// name: tly_high_add_many
UNWIND $rows AS r
CREATE (:PendingHigh {id: r.id, at: r.at})

// name: tly_high_clear
MATCH (x:PendingHigh) DELETE x

// name: tly_high_newest
// `kg status`'s newest pending high-priority entries, from the maintained table.
MATCH (x:PendingHigh) WHERE x.at >= $since
RETURN x.id AS id, x.at AS created_at
ORDER BY created_at DESC, id DESC
LIMIT $limit

// name: tly_high_all
MATCH (x:PendingHigh) RETURN x.id AS id, x.at AS at ORDER BY id

// name: tly_high_full
// The pending high-priority events, in full (a rebuild).
MATCH (n:Node)
WHERE n.kind = 'event' AND n.status = 'pending' AND n.priority IN $priorities
RETURN n.id AS id, n.created_at AS at

// The edges leaving one node, or every node, per type. One label per query: in kuzu 0.11.3 a pattern over
// several edge tables (`-[r]->`, `-[r:a|b]->`) counts committed edges twice inside a transaction that
// has added edges.

// name: tly_out_caused_by
MATCH (n:Node {id: $id})-[r:caused_by]->() RETURN count(r) AS n

// name: tly_out_led_to
MATCH (n:Node {id: $id})-[r:led_to]->() RETURN count(r) AS n

// name: tly_out_supports
MATCH (n:Node {id: $id})-[r:supports]->() RETURN count(r) AS n

// name: tly_out_contradicts
MATCH (n:Node {id: $id})-[r:contradicts]->() RETURN count(r) AS n

// name: tly_out_related_to
MATCH (n:Node {id: $id})-[r:related_to]->() RETURN count(r) AS n

// name: tly_out_derived_from
MATCH (n:Node {id: $id})-[r:derived_from]->() RETURN count(r) AS n

// name: tly_out_about
MATCH (n:Node {id: $id})-[r:about]->() RETURN count(r) AS n

// name: tly_count_caused_by
MATCH ()-[r:caused_by]->() RETURN count(r) AS n

// name: tly_count_led_to
MATCH ()-[r:led_to]->() RETURN count(r) AS n

// name: tly_count_supports
MATCH ()-[r:supports]->() RETURN count(r) AS n

// name: tly_count_contradicts
MATCH ()-[r:contradicts]->() RETURN count(r) AS n

// name: tly_count_related_to
MATCH ()-[r:related_to]->() RETURN count(r) AS n

// name: tly_count_derived_from
MATCH ()-[r:derived_from]->() RETURN count(r) AS n

// name: tly_count_about
MATCH ()-[r:about]->() RETURN count(r) AS n

// name: tly_count_change_applies
// From the Change side (the hint): Kùzu's own plan scans every Node to count a handful (issue 22).
MATCH (a:Change)-[r:change_applies]->(b:Node) HINT (a JOIN r) JOIN b RETURN count(r) AS n

// name: tly_count_change_applies
// dialect: falkordb
MATCH ()-[r:change_applies]->() RETURN count(r) AS n

// name: tly_count_change_pattern
// From the Change side (the hint): Kùzu's own plan scans every Node to count a handful (issue 22).
MATCH (a:Change)-[r:change_pattern]->(b:Node) HINT (a JOIN r) JOIN b RETURN count(r) AS n

// name: tly_count_change_pattern
// dialect: falkordb
MATCH ()-[r:change_pattern]->() RETURN count(r) AS n

// name: tly_count_proposal_about
// From the proposals' side (Meta, migration 0011; the hint): Kùzu's own plan scans every Node to count a handful.
MATCH (a:Meta)-[r:proposal_about]->(b:Node) HINT (a JOIN r) JOIN b RETURN count(r) AS n

// name: tly_count_proposal_about
// dialect: falkordb
MATCH ()-[r:proposal_about]->() RETURN count(r) AS n

// name: tly_count_proposal_change
// From the proposals' side (Meta, migration 0011; the hint): Kùzu's own plan scans every Change to count a handful.
MATCH (a:Meta)-[r:proposal_change]->(b:Change) HINT (a JOIN r) JOIN b RETURN count(r) AS n

// name: tly_count_proposal_change
// dialect: falkordb
MATCH ()-[r:proposal_change]->() RETURN count(r) AS n

// name: tly_count_decision_about
// From the decisions' side (Meta, migration 0011; the hint): Kùzu's own plan scans every Node to count a handful.
MATCH (a:Meta)-[r:decision_about]->(b:Node) HINT (a JOIN r) JOIN b RETURN count(r) AS n

// name: tly_count_decision_about
// dialect: falkordb
MATCH ()-[r:decision_about]->() RETURN count(r) AS n

// name: tly_count_learned_from
// From the skills' side (Meta, migration 0011; the hint): Kùzu's own plan scans every Node to count a handful.
MATCH (a:Meta)-[r:learned_from]->(b:Node) HINT (a JOIN r) JOIN b RETURN count(r) AS n

// name: tly_count_learned_from
// dialect: falkordb
MATCH ()-[r:learned_from]->() RETURN count(r) AS n

// name: tly_high_ids
// The session brief's and `kg status`'s newest pending high-priority entries (hooks_pending_high_ids).
MATCH (x:PendingHigh)
RETURN x.id AS id
ORDER BY x.at DESC, x.id DESC
LIMIT $limit

// name: tly_high_count
MATCH (x:PendingHigh) RETURN count(x) AS n

// name: tly_watch_row
// One entry of the memory's watch list, by key (memory_watch's columns).
MATCH (n:Node {id: $id})
RETURN n.id AS id, n.text AS text, n.priority AS priority, n.entry_type AS entry_type, n.area AS area,
       n.created_at AS created_at, n.reinforced_at AS reinforced_at
