// The learning lifecycle (issue 4): applied changes, proposals, conflict decisions and the marked blocks kg
// keeps in instruction files. Nothing here is ever deleted: a reverted change stays, with its verdict.
//
// Decay bookkeeping on the shared Node table: the stage a node has decayed to (0 none, 1 demoted, 2 stale,
// 3 expired), and the priority it had before decay, so that reinforcement can restore it. Stored so that a
// second `kg cycle` with the same --now changes nothing.
ALTER TABLE Node ADD decay_stage INT64 DEFAULT 0;
ALTER TABLE Node ADD base_priority STRING;
// An applied rule: where it was written, why, the block's content before (for a byte-exact revert) and after,
// and the verification state. `due_since` is when the current verification first fell due without a
// decisive verdict (the overdue clock); `check_count` counts verifications run.
CREATE NODE TABLE Change(
    id STRING PRIMARY KEY,
    kind STRING,
    target STRING,
    block STRING,
    target_kind STRING,
    text STRING,
    hypothesis STRING,
    prior_block STRING,
    prior_exists BOOLEAN,
    post_block STRING,
    pattern_key STRING,
    applied_at TIMESTAMP,
    next_check TIMESTAMP,
    due_since TIMESTAMP,
    check_count INT64,
    verdict STRING,
    verdict_at TIMESTAMP,
    rate_before DOUBLE,
    rate_after DOUBLE,
    evidence STRING[],
    status STRING,
    reverted_at TIMESTAMP,
    revert_reason STRING,
    proposal INT64,
    source STRING
);
// A change waiting for a human: promotion (to SOUL.md, AGENTS.md, a new skill), verification (evidence
// requested for an overdue check) or critical_fix. `number` is what `kg approve N` takes; it never changes.
CREATE NODE TABLE Proposal(
    id STRING PRIMARY KEY,
    number INT64,
    type STRING,
    target STRING,
    target_kind STRING,
    change STRING,
    text STRING,
    hypothesis STRING,
    priority STRING,
    area STRING,
    category STRING,
    motivation STRING,
    evidence STRING[],
    risk STRING,
    effort STRING,
    impact STRING,
    status STRING,
    reason STRING,
    created_at TIMESTAMP,
    decided_at TIMESTAMP
);
// A conflict outcome between two principles joined by `contradicts`: both scores with their parts, the
// winner ('' for a tie awaiting review), and whether a human overrode it.
CREATE NODE TABLE Decision(
    id STRING PRIMARY KEY,
    a STRING,
    b STRING,
    score_a INT64,
    score_b INT64,
    parts_a STRING,
    parts_b STRING,
    winner STRING,
    status STRING,
    override BOOLEAN,
    reason STRING,
    created_at TIMESTAMP,
    decided_at TIMESTAMP
);
// The marked blocks kg writes: the hash of what kg last wrote (a different hash on disk means a human edited
// inside the block), the glue kg inserted before the block (so removing it restores the file byte for byte),
// and whether kg created the file.
CREATE NODE TABLE ManagedBlock(
    id STRING PRIMARY KEY,
    path STRING,
    name STRING,
    hash STRING,
    glue STRING,
    created_file BOOLEAN,
    flag STRING,
    updated_at TIMESTAMP
);
CREATE REL TABLE change_applies(FROM Change TO Node, created_at TIMESTAMP);
CREATE REL TABLE change_pattern(FROM Change TO Node, created_at TIMESTAMP);
CREATE REL TABLE proposal_about(FROM Proposal TO Node, created_at TIMESTAMP);
CREATE REL TABLE proposal_change(FROM Proposal TO Change, created_at TIMESTAMP);
CREATE REL TABLE decision_about(FROM Decision TO Node, created_at TIMESTAMP);
// A staging table for bulk updates of Node rows. In kuzu 0.11.3 `UNWIND $rows AS r MATCH (n:Node {id: r.id})`
// and `WHERE n.id IN $ids` cost rows × nodes (20k updates on 100k nodes: 22 s); loading the rows here and
// joining `MATCH (s:LcStage), (n:Node) WHERE n.id = s.id` is a hash join (the same update: 1 s). Emptied
// after each use.
CREATE NODE TABLE LcStage(id STRING PRIMARY KEY, stage INT64, priority STRING, base STRING, stale BOOLEAN, status STRING, at TIMESTAMP);
