// name: lc_promotion_candidates
// Patterns that recurred often enough, in enough sessions, inside the promotion window, with no pending
// proposal and no skipped proposal since their last occurrence. Two grouping stages (the DISTINCT trap).
// An event whose only content is an exit status (tagged 'exit-code-only' by rules/errors.toml) never counts.
MATCH (p:Node)-[:derived_from]->(e:Node)
WHERE p.kind = 'pattern' AND e.kind = 'event' AND p.status IN $pattern_statuses
  AND e.created_at >= $since AND e.created_at <= $now AND NOT e.status IN $ignore_statuses
  AND NOT coalesce(list_contains(e.tags, 'exit-code-only'), false)
WITH p, e.session AS s, count(e) AS n, max(e.created_at) AS last
WITH p, count(s) AS sessions, CAST(sum(n) AS INT64) AS recurrence, max(last) AS last_seen
WHERE recurrence >= $min_recurrence AND sessions >= $min_sessions
OPTIONAL MATCH (q:Meta)-[:proposal_about]->(p)
WHERE q.status = 'pending' OR (q.status = 'skipped' AND q.decided_at >= last_seen)
WITH p, sessions, recurrence, last_seen, count(q) AS blocking
WHERE blocking = 0
RETURN p.id AS id, p.pattern_key AS key, p.text AS text, p.priority AS priority, p.area AS area,
       recurrence, sessions, last_seen
ORDER BY recurrence DESC, last_seen DESC, id

// name: lc_promotion_figures
// `lc_promotion_candidates` without the patterns' key, text and area: what a read that shows only the first
// few ready patterns needs of all of them (their number, their rank), so the text column is read only for the
// few it shows (`lc_pattern_fields`). At 100k entries 4,899 patterns were ready: their text cost ~0.13 s and
// ~20 MB of the read server's peak per `kg status`. Same WHERE, same order as lc_promotion_candidates.
MATCH (p:Node)-[:derived_from]->(e:Node)
WHERE p.kind = 'pattern' AND e.kind = 'event' AND p.status IN $pattern_statuses
  AND e.created_at >= $since AND e.created_at <= $now AND NOT e.status IN $ignore_statuses
  AND NOT coalesce(list_contains(e.tags, 'exit-code-only'), false)
WITH p, e.session AS s, count(e) AS n, max(e.created_at) AS last
WITH p, count(s) AS sessions, CAST(sum(n) AS INT64) AS recurrence, max(last) AS last_seen
WHERE recurrence >= $min_recurrence AND sessions >= $min_sessions
OPTIONAL MATCH (q:Meta)-[:proposal_about]->(p)
WHERE q.status = 'pending' OR (q.status = 'skipped' AND q.decided_at >= last_seen)
WITH p, sessions, recurrence, last_seen, count(q) AS blocking
WHERE blocking = 0
RETURN p.id AS id, p.priority AS priority, recurrence, sessions, last_seen
ORDER BY recurrence DESC, last_seen DESC, id

// name: lc_pattern_fields
// A ready pattern's key, text and area, by key (the few a status or a cycle shows, after lc_promotion_figures).
MATCH (p:Node {id: $id})
RETURN p.pattern_key AS key, p.text AS text, p.area AS area

// name: lc_window_events
// The occurrences inside the window of the given patterns: their fields decide the target and the text.
// UNWIND + `p.id = pid` is one hash join; `p.id IN $ids` tests the list on every edge (1.6 s against 2.4 s
// for 200 patterns at 100k events).
UNWIND $ids AS pid
MATCH (p:Node)-[:derived_from]->(e:Node)
WHERE p.id = pid AND e.kind = 'event' AND e.created_at >= $since AND e.created_at <= $now
  AND NOT e.status IN $ignore_statuses
RETURN p.id AS pattern, e.id AS id, e.created_at AS created_at, e.category AS category, e.area AS area,
       e.entry_type AS entry_type, e.action AS action, e.tags AS tags, e.source AS source,
       e.priority AS priority, e.text AS text
ORDER BY pattern, created_at, id

// name: lc_window_events
// dialect: falkordb
// FalkorDB starts the join from an index scan of every event (n.kind) for each id (over 200 s for 200 patterns
// at 100k events); a WITH makes it start from each pattern found by key.
UNWIND $ids AS pid
MATCH (p:Node {id: pid})
WITH p
MATCH (p)-[:derived_from]->(e:Node)
WHERE e.kind = 'event' AND e.created_at >= $since AND e.created_at <= $now
  AND NOT e.status IN $ignore_statuses
RETURN p.id AS pattern, e.id AS id, e.created_at AS created_at, e.category AS category, e.area AS area,
       e.entry_type AS entry_type, e.action AS action, e.tags AS tags, e.source AS source,
       e.priority AS priority, e.text AS text, e.session AS session, e.workspace AS workspace
ORDER BY pattern, created_at, id

// name: lc_window_events_of
// The same for one pattern, by key: a primary-key lookup and its members (kuzu 0.11.3 answers the UNWIND
// above with a scan of the node table: 0.75 s at 1M events for the ten patterns `kg status` lists).
MATCH (p:Node {id: $id})-[:derived_from]->(e:Node)
WHERE e.kind = 'event' AND e.created_at >= $since AND e.created_at <= $now
  AND NOT e.status IN $ignore_statuses
RETURN p.id AS pattern, e.id AS id, e.created_at AS created_at, e.category AS category, e.area AS area,
       e.entry_type AS entry_type, e.action AS action, e.tags AS tags, e.source AS source,
       e.priority AS priority, e.text AS text
ORDER BY created_at, id

// name: lc_window_events_of
// dialect: falkordb
// The same, with the workspace each event came from: a workspace-scope rule (a USER.md preference) is promoted
// only from the events of the workspace whose cycle runs (kg/lifecycle/promoting.py).
MATCH (p:Node {id: $id})-[:derived_from]->(e:Node)
WHERE e.kind = 'event' AND e.created_at >= $since AND e.created_at <= $now
  AND NOT e.status IN $ignore_statuses
RETURN p.id AS pattern, e.id AS id, e.created_at AS created_at, e.category AS category, e.area AS area,
       e.entry_type AS entry_type, e.action AS action, e.tags AS tags, e.source AS source,
       e.priority AS priority, e.text AS text, e.session AS session, e.workspace AS workspace
ORDER BY created_at, id

// name: lc_change_ids
MATCH (c:Change) WHERE c.id STARTS WITH $prefix RETURN c.id AS id

// name: lc_decision_ids
// Decisions are Meta rows of kind 'decision' (migration 0011), keyed 'decision:' + their id.
MATCH (d:Meta) WHERE d.kind = 'decision' AND d.id STARTS WITH $prefix RETURN d.id AS id

// name: lc_proposal_max
// Proposals are Meta rows of kind 'proposal' (migration 0011), keyed 'proposal:' + their id.
MATCH (q:Meta) WHERE q.kind = 'proposal' RETURN coalesce(max(q.number), 0) AS n

// name: lc_change_create
// One applied change (a handful per cycle; created one per statement). post_block '' until the export SETs it
// (lc_change_post): a change made with a NULL one after others were SET tore theirs at a CHECKPOINT (kuzu 0.11.3,
// kg/store/strings.py).
CREATE (c:Change {id: $id, kind: $kind, target: $target, block: $block, target_kind: $target_kind,
  text: $text, hypothesis: $hypothesis, prior_block: $prior_block, prior_exists: $prior_exists,
  post_block: coalesce($post_block, ''), pattern_key: $pattern_key, applied_at: $at, next_check: $next_check,
  check_count: 0, verdict: '', evidence: $evidence, status: 'applied', revert_reason: '',
  proposal: $proposal, source: $source})

// name: lc_change_create
// dialect: falkordb
// On a team graph a change names the workspace whose cycle made it: a rule whose target's scope is
// "workspace" (rules/lifecycle.toml) renders only there (kg/lifecycle/render.py).
CREATE (c:Change {id: $id, kind: $kind, target: $target, block: $block, target_kind: $target_kind,
  text: $text, hypothesis: $hypothesis, prior_block: $prior_block, prior_exists: $prior_exists,
  post_block: $post_block, pattern_key: $pattern_key, applied_at: $at, next_check: $next_check,
  check_count: 0, verdict: '', evidence: $evidence, status: 'applied', revert_reason: '',
  proposal: $proposal, source: $source, workspace: $origin_workspace})

// name: lc_change_link
// The change → the rule node it rendered, and → the pattern it came from; the rule node derived_from the
// pattern.
MATCH (c:Change {id: $change}), (n:Node {id: $node}), (p:Node {id: $pattern})
CREATE (c)-[:change_applies {created_at: $at}]->(n), (c)-[:change_pattern {created_at: $at}]->(p),
       (n)-[:derived_from {created_at: $at, manual: false, score: 1.0, reason: $reason}]->(p)

// name: lc_change_post
UNWIND $rows AS r
MATCH (c:Change {id: r.id}) SET c.post_block = r.post

// name: lc_mark_promoted
// The pattern and its open occurrences become `promoted`.
MATCH (p:Node {id: $pattern})
SET p.status = 'promoted', p.updated_at = $at
WITH p
MATCH (p)-[:derived_from]->(e:Node)
WHERE e.kind = 'event' AND e.status IN $from_statuses AND e.created_at <= $at
SET e.status = 'promoted', e.updated_at = $at

// name: lc_mark_promoted_many
// lc_mark_promoted for a cycle's promotions at once: one hash join on the ids (a statement per pattern cost
// ~0.1-0.3 s at 100k events, the pattern's edges being found by scanning).
UNWIND $patterns AS pid
MATCH (p:Node)
WHERE p.id = pid
SET p.status = 'promoted', p.updated_at = $at
WITH p
MATCH (p)-[:derived_from]->(e:Node)
WHERE e.kind = 'event' AND e.status IN $from_statuses AND e.created_at <= $at
SET e.status = 'promoted', e.updated_at = $at

// name: lc_changes_due
// Applied, confirmed or checking changes whose check is due. The hint makes Kùzu start from the changes and read only
// their patterns' rows; its own plan hashes the whole node table first (0.12 s of CPU at 1M nodes, with no
// change at all).
// `WITH` before the status filter: pushed into the scan, kuzu 0.11.3 read rows this transaction made or remade
// wrong (tests/integration/test_filter_in_transaction.py).
MATCH (c:Change)-[r:change_pattern]->(p:Node)
HINT (c JOIN r) JOIN p
WITH c, p
WHERE c.status IN $statuses AND c.next_check <= $now
RETURN c.id AS id, c.status AS status, c.applied_at AS applied_at, c.next_check AS next_check,
       c.due_since AS due_since, c.check_count AS check_count, c.evidence AS evidence, c.target AS target,
       c.text AS text, c.pattern_key AS key, c.hypothesis AS hypothesis, c.block AS block, p.id AS pattern
ORDER BY next_check, id

// name: lc_change_rules
// The rule node of each of these changes, read by the verify step before it makes any change's row anew: a revert
// sets the rule node by this key (see lc_change_revert). By key from an UNWIND, each walk hinted from the change (an
// OPTIONAL MATCH in lc_changes_due hashed the whole node table on every `kg status`).
UNWIND $ids AS i
MATCH (c:Change {id: i})-[a:change_applies]->(n:Node)
HINT (c JOIN a) JOIN n
RETURN c.id AS id, n.id AS rule

// name: lc_change_rules
// dialect: falkordb
UNWIND $ids AS i
MATCH (c:Change {id: i})-[:change_applies]->(n:Node)
RETURN c.id AS id, n.id AS rule

// name: lc_changes_due
// dialect: falkordb
// The same without Kùzu's join hint.
MATCH (c:Change)-[:change_pattern]->(p:Node)
WHERE c.status IN $statuses AND c.next_check <= $now
RETURN c.id AS id, c.status AS status, c.applied_at AS applied_at, c.next_check AS next_check,
       c.due_since AS due_since, c.check_count AS check_count, c.evidence AS evidence, c.target AS target,
       c.text AS text, c.pattern_key AS key, c.hypothesis AS hypothesis, c.block AS block, p.id AS pattern
ORDER BY next_check, id

// name: lc_change_update
// A verification's outcome (every field typed: a null inside UNWIND rows breaks type inference, and in
// kuzu 0.11.3 `SET x = CASE WHEN r.flag THEN r.v ELSE NULL END` under UNWIND fails with bad_function_call,
// so the overdue clock is set and cleared by the two queries below).
// Lists are never SET here: `lst_` columns name them, and the store makes such a row anew (kg/store/remake.py).
UNWIND $rows AS r
MATCH (c:Change {id: r.id})
SET c.status = r.status, c.next_check = r.next_check,
    c.check_count = r.check_count, c.verdict = r.verdict, c.verdict_at = r.at,
    c.rate_before = r.rate_before, c.rate_after = r.rate_after
RETURN c.id AS lst_key, CAST(r.evidence AS STRING[]) AS lst_evidence

// name: lc_change_update
// dialect: falkordb
// A team graph SETs the lists in place (the bug is kuzu 0.11.3's checkpoint).
UNWIND $rows AS r
MATCH (c:Change {id: r.id})
SET c.status = r.status, c.next_check = r.next_check,
    c.check_count = r.check_count, c.verdict = r.verdict, c.verdict_at = r.at,
    c.rate_before = r.rate_before, c.rate_after = r.rate_after, c.evidence = r.evidence

// name: lc_change_due_set
// The overdue clock: when the current verification first fell due without a decisive verdict.
UNWIND $rows AS r
MATCH (c:Change {id: r.id}) SET c.due_since = r.due_since

// name: lc_change_due_clear
// By key from an UNWIND, never `c.id IN $ids`: kuzu 0.11.3 looks such a list up in the key index wrongly for a
// row made in the open transaction (a change made anew, kg/store/remake.py) and matched the row before it.
UNWIND $ids AS i
MATCH (c:Change {id: i}) WHERE c.due_since IS NOT NULL SET c.due_since = NULL

// name: lc_change_revert
// Revert: the change, its rule node and its pattern; the pattern's promoted occurrences are open again.
// Its evidence is not SET here: the store makes each change's row anew with `$rows`' evidence (kg/store/remake.py).
// The rule node and the pattern are found by their keys (`rule`: lc_change_rules, `pattern`: lc_changes_due, both
// read before this transaction made any change's row anew), never by an edge from the change: Kùzu 0.11.3 finds a
// remade row's edges under the wrong row, even walked from the change with a join hint (QA: a cycle that confirmed
// one rule and reverted another marked the confirmed rule's node reverted, and its line left MEMORY.md). A change
// with no rule node (an imported trail's, say) still has its pattern reverted: the rule's match is optional.
UNWIND $rows AS r
MATCH (c:Change {id: r.id})
SET c.status = r.status, c.reverted_at = r.at, c.revert_reason = r.reason
WITH r
OPTIONAL MATCH (n:Node {id: r.rule})
SET n.status = 'reverted', n.updated_at = r.at
WITH r
MATCH (p:Node {id: r.pattern})
SET p.status = 'reverted', p.updated_at = r.at
WITH p, r
MATCH (p)-[:derived_from]->(e:Node)
WHERE e.kind = 'event' AND e.status = 'promoted'
SET e.status = 'pending', e.updated_at = r.at

// name: lc_change_revert
// dialect: falkordb
// A team graph SETs the lists in place (the bug is kuzu 0.11.3's checkpoint).
UNWIND $rows AS r
MATCH (c:Change {id: r.id})
SET c.status = r.status, c.reverted_at = r.at, c.revert_reason = r.reason, c.evidence = r.evidence
WITH r
OPTIONAL MATCH (n:Node {id: r.rule})
SET n.status = 'reverted', n.updated_at = r.at
WITH r
MATCH (p:Node {id: r.pattern})
SET p.status = 'reverted', p.updated_at = r.at
WITH p, r
MATCH (p)-[:derived_from]->(e:Node)
WHERE e.kind = 'event' AND e.status = 'promoted'
SET e.status = 'pending', e.updated_at = r.at

// name: lc_verification_open
// Which of these changes already have a pending verification proposal.
// By key from an UNWIND (see `lc_change_due_clear`).
UNWIND $ids AS i
MATCH (q:Meta)-[:proposal_change]->(c:Change {id: i})
WHERE q.status = 'pending'
RETURN DISTINCT c.id AS id

// name: lc_decay_candidates
// Nodes whose decay stage changes: unpinned, open, and either unreinforced since the first threshold or
// already decayed (a reinforcement since then restores them). Reinforcement is the latest of the node's own
// clock, its pattern's last occurrence and its newest edge, taken in one pass over its edges; the stage it
// has reached by then comes from the three thresholds ($demote_before > $stale_before > $expire_before), and
// only nodes whose stage differs are returned (a first cycle over a year's import returns what changes, not
// every old node). kg/lifecycle/decay.py decides what each one becomes. Categories in $keep_categories (a
// preference: kept until changed) never decay.
MATCH (n:Node)
WHERE n.kind IN $kinds AND n.status IN $statuses AND (n.pinned IS NULL OR n.pinned = false)
  AND NOT coalesce(n.category, '') IN $keep_categories
  AND (n.reinforced_at < $demote_before OR n.decay_stage > 0)
OPTIONAL MATCH (n)-[r]-(m:Node)
WITH n, max(r.created_at) AS edge_at,
     max(CASE WHEN label(r) = 'derived_from' AND m.kind = 'pattern' THEN m.reinforced_at END) AS pattern_at
WITH n, edge_at, pattern_at,
     CASE WHEN n.reinforced_at IS NULL OR n.created_at > n.reinforced_at THEN n.created_at
          ELSE n.reinforced_at END AS own
WITH n, pattern_at, CASE WHEN edge_at IS NOT NULL AND edge_at > own THEN edge_at ELSE own END AS own_edge
WITH n, CASE WHEN pattern_at IS NOT NULL AND pattern_at > own_edge THEN pattern_at ELSE own_edge END AS last
WITH n, last, CASE WHEN last <= $expire_before THEN 3 WHEN last <= $stale_before THEN 2
                   WHEN last <= $demote_before THEN 1 ELSE 0 END AS reached
WHERE reached <> coalesce(n.decay_stage, 0) AND coalesce(n.decay_stage, 0) < 3
RETURN n.id AS id, n.status AS status, n.priority AS priority, n.base_priority AS base_priority,
       coalesce(n.decay_stage, 0) AS stage, last

// name: lc_decay_revive
// Expired nodes of $kinds (stage 3, $expired_status, set so by decay) that recur: at least $min of their
// occurrences, none of an ignored status, newer than $since (expire_days before the cycle), each dated the later
// of its own time and when kg learned it. kg/lifecycle/decay.py gives them the stage their new age gives.
MATCH (p:Node)-[:derived_from]->(e:Node)
WHERE p.kind IN $kinds AND p.status = $expired_status AND p.decay_stage = 3
  AND (p.pinned IS NULL OR p.pinned = false) AND p.reinforced_at > $since AND e.kind = 'event'
  AND NOT coalesce(e.status, '') IN $ignore_statuses
WITH p, CASE WHEN e.reinforced_at IS NULL OR e.created_at > e.reinforced_at THEN e.created_at
             ELSE e.reinforced_at END AS at
WHERE at > $since
WITH p, count(at) AS n, max(at) AS last
WHERE n >= $min
RETURN p.id AS id, p.status AS status, p.priority AS priority, p.base_priority AS base_priority, 3 AS stage, last

// name: lc_decay_revive_one
// lc_decay_revive for one pattern, by key: whether the next cycle revives it (kg/lifecycle/revival.py: `kg status`
// and `kg patterns` say so between its recurrence and that cycle).
MATCH (p:Node {id: $id})-[:derived_from]->(e:Node)
WHERE p.status = $expired_status AND p.decay_stage = 3
  AND (p.pinned IS NULL OR p.pinned = false) AND p.reinforced_at > $since AND e.kind = 'event'
  AND NOT coalesce(e.status, '') IN $ignore_statuses
WITH p, CASE WHEN e.reinforced_at IS NULL OR e.created_at > e.reinforced_at THEN e.created_at
             ELSE e.reinforced_at END AS at
WHERE at > $since
WITH p, count(at) AS n
WHERE n >= $min
RETURN p.id AS id

// name: lc_stage_load
// Decay decisions into the staging table (no full-text index there, so a multi-row CREATE is safe).
UNWIND $rows AS r
CREATE (:LcStage {id: r.id, stage: r.stage, priority: r.priority, base: r.base, stale: r.stale,
                  status: r.status, at: r.at})

// name: lc_decay_apply
// Apply the staged decay decisions with one hash join (see LcStage in migration 0002 for why).
MATCH (s:LcStage), (n:Node)
WHERE n.id = s.id
SET n.decay_stage = s.stage, n.priority = s.priority, n.base_priority = s.base, n.stale = s.stale,
    n.status = s.status, n.updated_at = s.at

// name: lc_live_changes
// What kg renders from applied changes: every live change with its rule node (the hint: see lc_changes_due), and
// the rule's own text (what a contradiction is found in: kg/lifecycle/settling.py, before any fact is read).
// `WITH` before the status filter: pushed into the scan, kuzu 0.11.3 read rows this transaction made or remade
// wrong (tests/integration/test_filter_in_transaction.py).
MATCH (c:Change)-[r:change_applies]->(n:Node)
HINT (c JOIN r) JOIN n
WITH c, n
WHERE c.status IN $statuses
RETURN c.id AS change, c.target AS target, c.block AS block, c.target_kind AS target_kind, c.text AS text,
       c.applied_at AS applied_at, n.id AS node, n.kind AS kind, n.status AS node_status, c.status AS status,
       n.text AS rule_text
ORDER BY applied_at, change

// name: lc_live_changes
// dialect: falkordb
// The same, with the workspace that made each change (a team graph: see lc_change_create).
MATCH (c:Change)-[:change_applies]->(n:Node)
WHERE c.status IN $statuses
RETURN c.id AS change, c.target AS target, c.block AS block, c.target_kind AS target_kind, c.text AS text,
       c.applied_at AS applied_at, n.id AS node, n.kind AS kind, n.status AS node_status,
       c.workspace AS workspace, c.status AS status, n.text AS rule_text
ORDER BY applied_at, change

// name: lc_free_principles
// Active principles no change rendered (added by hand, or restored into an empty graph): they go to MEMORY.md.
// One with a proposal about it is another workspace's, imported into a graph with a history of its own
// (kg/lifecycle/imported.py): it waits for `kg approve N` (then a change renders it) and a skipped one never
// renders. (Only import proposals are about a principle: a promotion's is about its pattern, a critical fix's
// about its entry.) One the other workspace promoted has its proposal about its pattern instead, naming it in its
// evidence (as an imported rule's: the pattern held by it).
MATCH (n:Node)
WHERE n.kind = 'principle' AND n.status = 'active'
  AND NOT EXISTS { MATCH (c:Change)-[:change_applies]->(n) }
  AND NOT EXISTS { MATCH (q:Meta)-[:proposal_about]->(n) }
OPTIONAL MATCH (n)-[:derived_from]->(p:Node)<-[:proposal_about]-(q:Meta)
WHERE q.type = 'import' AND n.id IN q.evidence
WITH n, count(q) AS held
WHERE held = 0
RETURN n.id AS node, n.text AS text, n.created_at AS created_at
ORDER BY created_at, node

// name: lc_rule_facts
// What a conflict score needs about the active rules: priority, area, its pattern's recurrence and last
// occurrence. Selected by kind and status (one scan), not `id IN $ids` (rows × list in kuzu 0.11.3).
MATCH (n:Node)
WHERE n.kind IN $kinds AND n.status = 'active'
OPTIONAL MATCH (n)-[:derived_from]->(p:Node)-[:derived_from]->(e:Node)
WHERE p.kind = 'pattern' AND e.kind = 'event' AND e.created_at <= $now
RETURN n.id AS id, n.text AS text, n.priority AS priority, n.area AS area, n.created_at AS created_at,
       n.reinforced_at AS reinforced_at, count(e) AS recurrence, max(e.created_at) AS last_seen

// name: lc_contradictions
// Each of these rules' `contradicts` edges, either direction, from the rule's side (a pair whose both ends are
// named comes from each: kg/lifecycle/settling.py keeps the pairs within the ids, each once). Each rule by primary
// key, not `a.id IN $ids AND b.id IN $ids`: pushed into the Node scan, kuzu 0.11.3 returned a pair twice once the
// cycle's transaction had made a rule node (tests/integration/test_filter_in_transaction.py), and rows x list
// took 182 ms against 36 ms for 300 rules among 100k nodes.
UNWIND $ids AS i
MATCH (a:Node {id: i})-[r:contradicts]-(b:Node)
RETURN a.id AS a, b.id AS b, r.reason AS reason, r.manual AS manual

// name: lc_contradicts_add
// One contradicting pair, both ends by primary key; run once per pair (kg.store.bulk.run_each). The batch
// form `UNWIND $rows MATCH (a {id: r.a}), (b {id: r.b})` joins the node table with itself and filled a
// 4 GiB buffer pool at 300k nodes.
MATCH (a:Node {id: $a}), (b:Node {id: $b})
MERGE (a)-[x:contradicts]->(b)
ON CREATE SET x.created_at = $at, x.manual = false, x.score = 1.0, x.reason = $reason

// name: lc_decisions
MATCH (d:Meta) WHERE d.kind = 'decision'
RETURN d.id AS id, d.a AS a, d.b AS b, d.score_a AS score_a, d.score_b AS score_b, d.parts_a AS parts_a,
       d.parts_b AS parts_b, d.winner AS winner, d.status AS status, d.override AS override,
       d.reason AS reason, d.created_at AS created_at, d.decided_at AS decided_at
ORDER BY id

// name: lc_decision_upsert
UNWIND $rows AS r
MERGE (d:Meta {key: 'decision:' + CAST(r.id AS STRING)})
ON CREATE SET d.kind = 'decision', d.id = r.id, d.created_at = r.at, d.a = r.a, d.b = r.b, d.override = false
SET d.score_a = r.score_a, d.score_b = r.score_b, d.parts_a = r.parts_a, d.parts_b = r.parts_b,
    d.winner = r.winner, d.status = r.status, d.reason = r.reason, d.decided_at = r.at
WITH d, r
MATCH (a:Node {id: r.a}), (b:Node {id: r.b})
MERGE (d)-[x:decision_about]->(a) ON CREATE SET x.created_at = r.at
MERGE (d)-[y:decision_about]->(b) ON CREATE SET y.created_at = r.at

// name: lc_decision_override
// `$key` is the whole key, 'decision:' + its id (kg/store/schema.py `meta_key`): a primary-key lookup. `$status`
// 'overridden' (a person picked `$winner`) or 'compatible' (a person said the two do not conflict: no winner).
MATCH (d:Meta {key: $key})
SET d.winner = $winner, d.override = true, d.status = $status, d.reason = $reason, d.decided_at = $at
RETURN d.id AS id

// name: lc_blocks
// Blocks are Meta rows of kind 'block' (migration 0011), keyed 'block:' + their id.
MATCH (b:Meta) WHERE b.kind = 'block'
RETURN b.id AS id, b.path AS path, b.name AS name, b.hash AS hash, b.glue AS glue,
       b.created_file AS created_file, b.flag AS flag, b.updated_at AS updated_at
ORDER BY id

// name: lc_block_upsert
UNWIND $rows AS r
MERGE (b:Meta {key: 'block:' + CAST(r.id AS STRING)})
SET b.kind = 'block', b.id = r.id, b.path = r.path, b.name = r.name, b.hash = r.hash, b.glue = r.glue, b.created_file = r.created_file,
    b.flag = r.flag, b.updated_at = r.at

// name: lc_blocks
// dialect: falkordb
// A team graph holds every workspace's blocks (what kg last wrote into that workspace's files): this one's.
MATCH (b:Meta) WHERE b.kind = 'block' AND b.workspace = $origin_workspace
RETURN b.block AS id, b.path AS path, b.name AS name, b.hash AS hash, b.glue AS glue,
       b.created_file AS created_file, b.flag AS flag, b.updated_at AS updated_at
ORDER BY id

// name: lc_block_upsert
// dialect: falkordb
UNWIND $rows AS r
MERGE (b:Meta {key: 'block:' + $origin_workspace + '/' + r.id})
SET b.kind = 'block', b.id = $origin_workspace + '/' + r.id, b.workspace = $origin_workspace, b.block = r.id, b.path = r.path, b.name = r.name, b.hash = r.hash,
    b.glue = r.glue, b.created_file = r.created_file, b.flag = r.flag, b.updated_at = r.at

// name: lc_proposal_create
CREATE (q:Meta {key: 'proposal:' + $id, kind: 'proposal', id: $id, number: $number, type: $type, target: $target, target_kind: $target_kind,
  change: $change, text: $text, hypothesis: $hypothesis, priority: $priority, area: $area, category: $category,
  motivation: $motivation, evidence: $evidence, risk: $risk, effort: $effort,
  impact: $impact, status: 'pending', reason: '', created_at: $at})

// name: lc_proposal_about
// `$key`: the proposal's whole key, 'proposal:' + its id (kg/store/schema.py `meta_key`): a primary-key lookup.
MATCH (q:Meta {key: $key}), (n:Node {id: $node})
CREATE (q)-[:proposal_about {created_at: $at}]->(n)

// name: lc_import_related_pattern
// The live pattern an imported principle relates to here, when its trail gave it none: the pattern of the most of
// the nodes it is linked to (an event's pattern, or a pattern linked itself), its change checked against it like a
// promotion's (kg/lifecycle/imported.py).
MATCH (n:Node {id: $node})-[]-(m:Node)
OPTIONAL MATCH (p:Node)-[:derived_from]->(m)
WITH CASE WHEN m.kind = 'pattern' THEN m.id ELSE p.id END AS id,
     CASE WHEN m.kind = 'pattern' THEN m.pattern_key ELSE p.pattern_key END AS key,
     CASE WHEN m.kind = 'pattern' THEN m.kind ELSE p.kind END AS kind,
     CASE WHEN m.kind = 'pattern' THEN m.status ELSE p.status END AS status
WHERE id IS NOT NULL AND kind = 'pattern' AND status <> 'merged'
RETURN id, key, count(*) AS n
ORDER BY n DESC, id
LIMIT 1

// name: lc_import_unproposed
// Of the principles an interrupted import loaded (its mark names them), those still active with neither their
// `import` proposal nor a change: the run that resumes it proposes them (kg/lifecycle/imported.py). By key: few ids.
UNWIND $ids AS i
MATCH (n:Node {id: i})
WHERE n.kind = 'principle' AND n.status = 'active'
  AND NOT EXISTS { MATCH (q:Meta)-[:proposal_about]->(n) }
  AND NOT EXISTS { MATCH (c:Change)-[:change_applies]->(n) }
OPTIONAL MATCH (n)-[:derived_from]->(p:Node)<-[:proposal_about]-(q:Meta)
WHERE q.type = 'import' AND n.id IN q.evidence
WITH n, count(q) AS held
WHERE held = 0
RETURN n.id AS id, n.text AS text, n.created_at AS created_at
ORDER BY created_at, id

// name: lc_import_pattern
// The pattern an imported principle derives from (its trail's `derived_from`), if any: its change is checked
// against it like a promotion's (kg/lifecycle/imported.py).
MATCH (n:Node {id: $node})-[:derived_from]->(p:Node)
WHERE p.kind = 'pattern'
RETURN p.id AS id, p.pattern_key AS key
ORDER BY id
LIMIT 1

// name: lc_import_apply
// An approved import proposal's change → the principle it renders (the node is the other workspace's, as it is).
MATCH (c:Change {id: $change}), (n:Node {id: $node})
CREATE (c)-[:change_applies {created_at: $at}]->(n)

// name: lc_import_apply_pattern
MATCH (c:Change {id: $change}), (p:Node {id: $pattern})
CREATE (c)-[:change_pattern {created_at: $at}]->(p)

// name: lc_proposal_for_change
MATCH (q:Meta {key: $key}), (c:Change {id: $change})
CREATE (q)-[:proposal_change {created_at: $at}]->(c)

// name: lc_proposals
MATCH (q:Meta)
WHERE q.kind = 'proposal' AND q.status IN $statuses
OPTIONAL MATCH (q)-[:proposal_about]->(n:Node)
OPTIONAL MATCH (q)-[:proposal_change]->(c:Change)
RETURN q.id AS id, q.number AS number, q.type AS type, q.target AS target, q.target_kind AS target_kind,
       q.change AS change, q.text AS text, q.hypothesis AS hypothesis, q.priority AS priority, q.area AS area,
       q.category AS category, q.motivation AS motivation, q.evidence AS evidence,
       q.risk AS risk, q.effort AS effort, q.impact AS impact, q.status AS status, q.reason AS reason,
       q.created_at AS created_at, q.decided_at AS decided_at, n.id AS node, n.kind AS node_kind,
       c.id AS change_id
ORDER BY number

// name: lc_proposal_decide
MATCH (q:Meta {key: $key})
SET q.status = $status, q.reason = $reason, q.decided_at = $at
RETURN q.id AS id

// name: lc_proposals_obsolete
// Pending verification proposals of changes that a verdict has settled (by key: see `lc_change_due_clear`).
UNWIND $ids AS i
MATCH (q:Meta)-[:proposal_change]->(c:Change {id: i})
WHERE q.status = 'pending'
SET q.status = 'obsolete', q.reason = $reason, q.decided_at = $at

// name: lc_critical_candidates
// Open entries of critical priority that no proposal covers yet.
MATCH (n:Node)
WHERE n.kind = 'event' AND n.status = 'pending' AND n.priority IN $priorities AND n.created_at <= $now
  AND NOT EXISTS { MATCH (q:Meta)-[:proposal_about]->(n) }
RETURN n.id AS id, n.text AS text, n.area AS area, n.pattern_key AS key, n.created_at AS created_at
ORDER BY created_at, id

// name: lc_changes_in
// Changes in the given statuses, read from the change table alone (no rule or pattern node): `kg status`'s
// checks out and the count of checks running, without the node-table scan lc_changes_all's optional joins plan.
// The statuses UNWOUND and matched by equality: `c.status IN $statuses` pushed into the scan, kuzu 0.11.3 read rows
// this transaction made or remade wrong, even behind WITH (tests/integration/test_filter_in_transaction.py).
UNWIND $statuses AS s
MATCH (c:Change)
WHERE c.status = s
RETURN c.id AS id, c.status AS status, c.target AS target, c.text AS text, c.evidence AS evidence,
       c.next_check AS next_check
ORDER BY id

// name: lc_changes_all
// Every change with its rule node and pattern (for `kg why` and reports).
MATCH (c:Change)
OPTIONAL MATCH (c)-[:change_applies]->(n:Node)
OPTIONAL MATCH (c)-[:change_pattern]->(p:Node)
RETURN c.id AS id, c.status AS status, c.target AS target, c.block AS block, c.text AS text,
       c.hypothesis AS hypothesis, c.applied_at AS applied_at, c.next_check AS next_check,
       c.verdict AS verdict, c.verdict_at AS verdict_at, c.rate_before AS rate_before,
       c.rate_after AS rate_after, c.evidence AS evidence, c.reverted_at AS reverted_at,
       c.revert_reason AS revert_reason, c.check_count AS check_count, c.proposal AS proposal,
       c.source AS source, n.id AS node, n.kind AS node_kind, n.text AS node_text, p.id AS pattern,
       p.pattern_key AS key
ORDER BY applied_at, id

// name: lc_pattern_events
MATCH (p:Node {id: $id})-[:derived_from]->(e:Node)
WHERE e.kind = 'event'
RETURN e.id AS id, e.text AS text, e.created_at AS created_at, e.session AS session, e.status AS status
ORDER BY created_at, id
LIMIT $limit

// name: lc_node_brief
MATCH (n:Node {id: $id})
RETURN n.id AS id, n.kind AS kind, n.status AS status, n.priority AS priority, n.base_priority AS base_priority,
       coalesce(n.decay_stage, 0) AS stage, n.pinned AS pinned, n.stale AS stale, n.text AS text,
       n.reinforced_at AS reinforced_at

// name: lc_pin
MATCH (n:Node {id: $id}) SET n.pinned = $pinned, n.updated_at = $at RETURN n.id AS id

// name: lc_reinforce
MATCH (n:Node {id: $id})
SET n.reinforced_at = $at, n.updated_at = $at, n.decay_stage = 0, n.stale = false, n.priority = $priority,
    n.status = $status
RETURN n.id AS id

// name: lc_change_confirm
// A human confirmed a change works (an approved verification proposal): monitored monthly from now.
// Lists are never SET here: `lst_` columns name them, and the store makes such a row anew (kg/store/remake.py).
MATCH (c:Change {id: $id})
WHERE c.status IN $statuses
SET c.status = 'confirmed', c.verdict = 'confirmed', c.verdict_at = $at, c.next_check = $next_check,
    c.due_since = NULL
RETURN c.id AS id, c.id AS lst_key, list_append(c.evidence, $line) AS lst_evidence

// name: lc_change_confirm
// dialect: falkordb
// A team graph SETs the lists in place (the bug is kuzu 0.11.3's checkpoint).
MATCH (c:Change {id: $id})
WHERE c.status IN $statuses
SET c.status = 'confirmed', c.verdict = 'confirmed', c.verdict_at = $at, c.next_check = $next_check,
    c.due_since = NULL, c.evidence = list_append(c.evidence, $line)
RETURN c.id AS id

// name: lc_pattern_times
// Every occurrence time of one pattern (its whole history: the verdict's baseline).
MATCH (p:Node {id: $id})-[:derived_from]->(e:Node)
WHERE e.kind = 'event' AND e.created_at <= $now
RETURN e.created_at AS created_at
ORDER BY created_at

// name: lc_pattern_times
// dialect: falkordb
// FalkorDB starts this match from an index scan of every event (n.kind) and walks back; a WITH makes it
// start from the one node found by key.
MATCH (p:Node {id: $id})
WITH p
MATCH (p)-[:derived_from]->(e:Node)
WHERE e.kind = 'event' AND e.created_at <= $now
RETURN e.created_at AS created_at
ORDER BY created_at

// name: lc_patterns_times
// Every occurrence time of every pattern: each pattern's rate without its rules, the rows of the workspace's
// rate prior (verification.prior_source = "patterns"); not kg's own notes of its verdicts (area $own_area).
MATCH (p:Node)-[:derived_from]->(e:Node)
WHERE p.kind = 'pattern' AND e.kind = 'event' AND e.created_at <= $now AND coalesce(e.area, '') <> $own_area
RETURN p.id AS pattern, e.created_at AS created_at
ORDER BY pattern, created_at

// name: lc_pattern_changes
// Every change made from one pattern, live or reverted (their live periods are not the base rate; the evidence
// trail names the days a person had taken one out of its file, which are).
MATCH (c:Change)-[:change_pattern]->(p:Node {id: $id})
RETURN c.id AS id, c.status AS status, c.text AS text, c.applied_at AS applied_at, c.reverted_at AS reverted_at,
       c.evidence AS evidence
ORDER BY applied_at, id

// name: lc_reverted_count
// Whether any change was ever reverted (the Change table is small): without one, no recovery query.
MATCH (c:Change) WHERE c.reverted_at IS NOT NULL RETURN count(c) AS n

// name: lc_recovery_candidates
// Reverted patterns that recur again: cooled down since their last revert, and recurring often enough, in
// enough sessions, since that revert (inside the promotion window), with no pending proposal and no skip
// since their last occurrence. `failed`: the texts of their reverted rules; applied_at: the latest one's.
MATCH (c:Change)-[:change_pattern]->(p:Node)
WHERE p.kind = 'pattern' AND p.status = 'reverted' AND c.reverted_at IS NOT NULL
WITH p, max(c.reverted_at) AS reverted_at, max(c.applied_at) AS applied_at, collect(c.text) AS failed
WHERE reverted_at <= $cooled
MATCH (p)-[:derived_from]->(e:Node)
WHERE e.kind = 'event' AND e.created_at >= reverted_at AND e.created_at >= $since AND e.created_at <= $now
  AND NOT e.status IN $ignore_statuses
WITH p, reverted_at, applied_at, failed, e.session AS s, count(e) AS n, max(e.created_at) AS last
WITH p, reverted_at, applied_at, failed, count(s) AS sessions, CAST(sum(n) AS INT64) AS recurrence,
     max(last) AS last_seen
WHERE recurrence >= $min_recurrence AND sessions >= $min_sessions
OPTIONAL MATCH (q:Meta)-[:proposal_about]->(p)
WHERE q.status = 'pending' OR (q.status = 'skipped' AND q.decided_at >= last_seen)
WITH p, reverted_at, applied_at, failed, sessions, recurrence, last_seen, count(q) AS blocking
WHERE blocking = 0
RETURN p.id AS id, p.pattern_key AS key, p.text AS text, p.priority AS priority, p.area AS area,
       recurrence, sessions, last_seen, reverted_at, applied_at, failed
ORDER BY recurrence DESC, last_seen DESC, id

// name: lc_pattern_actions
// Every suggested action among a pattern's occurrences, oldest first (the next-best text after a revert).
MATCH (p:Node {id: $id})-[:derived_from]->(e:Node)
WHERE e.kind = 'event' AND e.action IS NOT NULL AND e.action <> ''
RETURN e.action AS action
ORDER BY e.created_at, e.id

// name: lc_pattern_actions
// dialect: falkordb
// FalkorDB starts this match from an index scan of every event (n.kind) and walks back; a WITH makes it
// start from the one node found by key.
MATCH (p:Node {id: $id})
WITH p
MATCH (p)-[:derived_from]->(e:Node)
WHERE e.kind = 'event' AND e.action IS NOT NULL AND e.action <> ''
RETURN e.action AS action
ORDER BY e.created_at, e.id

// name: lc_first_event
// When kg started watching this workspace: its first event.
MATCH (e:Node)
WHERE e.kind = 'event'
RETURN min(e.created_at) AS first

// name: lc_watch_days
// The distinct days with anything logged up to now (an event of any kind or pattern, a session's start or end):
// kg/lifecycle/verify_watch.py leaves the long spells between them out of a rule's rate before.
MATCH (e:Node)
WHERE e.kind = 'event' AND e.created_at <= $now
RETURN DISTINCT CAST(e.created_at AS DATE) AS day
UNION
MATCH (s:Session)
WHERE s.started_at <= $now
RETURN DISTINCT CAST(s.started_at AS DATE) AS day
UNION
MATCH (s:Session)
WHERE s.ended_at <= $now
RETURN DISTINCT CAST(s.ended_at AS DATE) AS day

// name: lc_watch_days
// dialect: falkordb
// (a datetime is ISO text here: its first ten characters are the day)
MATCH (e:Node)
WHERE e.kind = 'event' AND e.created_at <= $now
RETURN DISTINCT substring(e.created_at, 0, 10) AS day
UNION
MATCH (s:Session)
WHERE s.started_at <= $now
RETURN DISTINCT substring(s.started_at, 0, 10) AS day
UNION
MATCH (s:Session)
WHERE s.ended_at <= $now
RETURN DISTINCT substring(s.ended_at, 0, 10) AS day

// name: lc_pending_count
// How many proposals of one type wait. (Not lc_proposals: in kuzu 0.11.3 its OPTIONAL MATCHes, run in the
// transaction that just created a proposal, returned undecodable strings once a workspace had ~30 of them.)
MATCH (q:Meta)
WHERE q.kind = 'proposal' AND q.status = 'pending' AND q.type = $type
RETURN count(q) AS n

// name: lc_promoted_since
// Promotions into each file since the start of the day (applied changes and promotion proposals): the
// per-file budget of a cycle counts them, so a second cycle the same day promotes nothing more.
MATCH (c:Change)
WHERE c.kind = 'promotion' AND c.applied_at >= $since AND c.applied_at <= $now AND c.source = 'auto'
RETURN c.target AS target, count(c) AS n
UNION ALL
MATCH (q:Meta)
WHERE q.kind = 'proposal' AND q.type = 'promotion' AND q.created_at >= $since AND q.created_at <= $now
RETURN q.target AS target, count(q) AS n

// name: lc_live_effects
// Every live change with what tells whether its rule is still in its file (kg/lifecycle/verify_withdrawn.py).
// The statuses UNWOUND and matched by equality: `c.status IN $statuses` pushed into the scan, kuzu 0.11.3 read rows
// this transaction made or remade wrong, even behind WITH (tests/integration/test_filter_in_transaction.py).
UNWIND $statuses AS s
MATCH (c:Change)
WHERE c.status = s
RETURN c.id AS id, c.status AS status, c.target AS target, c.block AS block, c.text AS text,
       c.evidence AS evidence, c.next_check AS next_check, c.due_since AS due_since
ORDER BY id

// name: lc_change_pause
// A change withdrawn by hand, or back in effect: its evidence trail and its next check (moved on by the pause).
// Lists are never SET here: `lst_` columns name them, and the store makes such a row anew (kg/store/remake.py).
UNWIND $rows AS r
MATCH (c:Change {id: r.id})
SET c.next_check = r.next_check
RETURN c.id AS lst_key, CAST(r.evidence AS STRING[]) AS lst_evidence

// name: lc_change_pause
// dialect: falkordb
// A team graph SETs the lists in place (the bug is kuzu 0.11.3's checkpoint).
UNWIND $rows AS r
MATCH (c:Change {id: r.id})
SET c.evidence = r.evidence, c.next_check = r.next_check

// name: lc_area_event_tags
// The tags of the entries of one area (kg's own notes: the entry a revert logged is tagged with its change's id).
MATCH (e:Node)
WHERE e.kind = 'event' AND e.area = $area
RETURN e.tags AS tags

// name: lc_import_orphan_rules
// Active rules another workspace's promotion made (a TOOLS.md gotcha, a USER.md preference, a skill: knowledge
// nodes) that no change renders here and no proposal is about: what a trail import into a graph that does not
// take the trail's lifecycle (a history of its own, or a team graph) brought without the change that rendered them
// there. Each becomes a pending `import` proposal about its pattern (kg/lifecycle/imported_rules.py, which sets
// aside those a proposal names already: never proposed twice); one with no pattern, a proposal about itself.
MATCH (n:Node)
WHERE n.kind = 'knowledge' AND n.status = 'active' AND n.source = 'promotion'
  AND NOT EXISTS { MATCH (c:Change)-[:change_applies]->(n) }
  AND NOT EXISTS { MATCH (q:Meta)-[:proposal_about]->(n) }
RETURN n.id AS id, n.text AS text, n.tags AS tags, n.files AS files, n.created_at AS created_at
ORDER BY created_at, id

// name: lc_import_rule_pattern
// The pattern a rule derives from, with its status and how many of its changes are live here (applied, confirmed,
// or out for a check): an imported rule's pattern is `promoted` in the trail, but nothing renders it here.
MATCH (n:Node {id: $node})-[:derived_from]->(p:Node)
WHERE p.kind = 'pattern'
OPTIONAL MATCH (c:Change)-[:change_pattern]->(p)
WHERE c.status IN $kept
RETURN p.id AS id, p.pattern_key AS key, p.status AS status, count(c) AS kept
ORDER BY id
LIMIT 1

// name: lc_import_superseded
// Pending `import` proposals about a pattern with a live change of its own here (applied, confirmed, or out for a
// check): this workspace promoted the pattern from its own evidence while the proposal waited (a promotion
// proposal approved meanwhile), or before the import made it. kg/lifecycle/imported_rules.py `supersede` closes them,
// and with $type 'promotion' the other way round: a promotion proposal whose pattern an approved import promoted.
MATCH (q:Meta)-[:proposal_about]->(p:Node)
WHERE q.kind = 'proposal' AND q.type = $type AND q.status = 'pending' AND p.kind = 'pattern'
MATCH (c:Change)-[:change_pattern]->(p)
WHERE c.status IN $kept
RETURN q.id AS id, q.number AS number, p.pattern_key AS key, p.id AS pattern, min(c.id) AS change,
       min(c.target) AS target
ORDER BY number

// name: lc_import_rule_in_file
// A live change of this pattern already rendering into this file and block (the pattern was promoted here while
// an imported rule of it waited for approval): approving the import would render it twice.
MATCH (c:Change)-[:change_pattern]->(p:Node {id: $pattern})
WHERE c.status IN $kept AND c.target = $target AND c.block = $block
RETURN c.id AS id
ORDER BY id
LIMIT 1
