// The rows kg/store/remake.py writes again, as a kuzu 0.11.3 checkpoint could have torn them before kg made such
// rows anew: their lists are read by `kg doctor` (kg/store/remake.py `torn`).

// name: rmk_meta_lists
// Meta rows holding a list their kind never has (a topic's keywords, a skill's triggers and tools, a proposal's
// evidence): the items of another row, written there by a checkpoint. One scan of the small table.
MATCH (m:Meta)
WHERE (m.keywords IS NOT NULL AND m.kind <> 'topic')
   OR ((m.triggers IS NOT NULL OR m.tools IS NOT NULL) AND m.kind <> 'skill')
   OR (m.evidence IS NOT NULL AND m.kind <> 'proposal')
RETURN m.key AS key, m.kind AS kind
ORDER BY key

// name: rmk_meta_kind
// A Meta row's kind, before `remake.clear` makes it anew without the lists that kind never has.
MATCH (m:Meta {key: $key})
RETURN m.kind AS kind

// name: rmk_change_evidence
// Every change's evidence trail and when it was applied: a line dated before that is another change's.
MATCH (c:Change)
WHERE c.evidence IS NOT NULL AND c.applied_at IS NOT NULL
RETURN c.id AS id, c.applied_at AS applied_at, c.evidence AS evidence
ORDER BY id
