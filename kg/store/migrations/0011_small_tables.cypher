// Issue 17: every Kùzu node table costs ~6 MB of the read server's memory when the database opens, whatever its
// rows; relationship tables cost ~0. Eight small tables move into Meta as kinds of row, so the graph opens with
// eight tables fewer: Tally (the counts of `kg status`), ManagedBlock (the marked blocks kg writes), Preference
// (the history of the user's preferences), Score (self-assessments), Topic (the topic index's topics), Skill,
// Decision (conflict outcomes) and Proposal. Each row's key carries its kind ('tally:' + its key, 'block:' + its
// id, 'pref:' + its id, 'score:' + its id, 'topic:' + its name, 'skill:' + its slug, 'decision:' + its id,
// 'proposal:' + its id), so every lookup by key stays a primary-key lookup when the caller passes the whole key;
// `id` holds the old key. A Preference's own `key` column is `pkey` here (Meta's key is the row's). The eight
// kinds hold tens to hundreds of rows whatever the graph's size (the lifecycle's, the user's); the large tables
// (Session, PatternRank, PendingHigh ...) stay their own, so a scan of them reads no other rows. The edges to a
// topic (`about`), from a skill (`learned_from`), a decision (`decision_about`) and a proposal (`proposal_about`,
// `proposal_change`) now start and end at Meta: each table is made again under a new name, its edges copied,
// the old one dropped and the new one renamed. The analyst still sees the eight as tables of their own names,
// and the edges' ends as they were (kg/analysis/snapshot.py, kg/store/schema.py MERGED_KINDS). Meta's own rows
// (migrations, flags) are kind 'meta'.
ALTER TABLE Meta ADD kind STRING DEFAULT 'meta';
ALTER TABLE Meta ADD id STRING;
ALTER TABLE Meta ADD n INT64;
ALTER TABLE Meta ADD path STRING;
ALTER TABLE Meta ADD name STRING;
ALTER TABLE Meta ADD hash STRING;
ALTER TABLE Meta ADD glue STRING;
ALTER TABLE Meta ADD created_file BOOLEAN;
ALTER TABLE Meta ADD flag STRING;
ALTER TABLE Meta ADD updated_at TIMESTAMP;
ALTER TABLE Meta ADD pkey STRING;
ALTER TABLE Meta ADD previous STRING;
ALTER TABLE Meta ADD action STRING;
ALTER TABLE Meta ADD at TIMESTAMP;
ALTER TABLE Meta ADD source STRING;
ALTER TABLE Meta ADD session STRING;
ALTER TABLE Meta ADD accuracy INT64;
ALTER TABLE Meta ADD usefulness INT64;
ALTER TABLE Meta ADD efficiency INT64;
ALTER TABLE Meta ADD tone INT64;
ALTER TABLE Meta ADD proactiveness INT64;
ALTER TABLE Meta ADD average DOUBLE;
ALTER TABLE Meta ADD notes STRING;
ALTER TABLE Meta ADD keywords STRING[];
ALTER TABLE Meta ADD built_at TIMESTAMP;
ALTER TABLE Meta ADD description STRING;
ALTER TABLE Meta ADD created TIMESTAMP;
ALTER TABLE Meta ADD updated TIMESTAMP;
ALTER TABLE Meta ADD triggers STRING[];
ALTER TABLE Meta ADD tools STRING[];
ALTER TABLE Meta ADD revisions INT64;
ALTER TABLE Meta ADD a STRING;
ALTER TABLE Meta ADD b STRING;
ALTER TABLE Meta ADD score_a INT64;
ALTER TABLE Meta ADD score_b INT64;
ALTER TABLE Meta ADD parts_a STRING;
ALTER TABLE Meta ADD parts_b STRING;
ALTER TABLE Meta ADD winner STRING;
ALTER TABLE Meta ADD status STRING;
ALTER TABLE Meta ADD override BOOLEAN;
ALTER TABLE Meta ADD reason STRING;
ALTER TABLE Meta ADD created_at TIMESTAMP;
ALTER TABLE Meta ADD decided_at TIMESTAMP;
ALTER TABLE Meta ADD number INT64;
ALTER TABLE Meta ADD type STRING;
ALTER TABLE Meta ADD target STRING;
ALTER TABLE Meta ADD target_kind STRING;
ALTER TABLE Meta ADD change STRING;
ALTER TABLE Meta ADD text STRING;
ALTER TABLE Meta ADD hypothesis STRING;
ALTER TABLE Meta ADD priority STRING;
ALTER TABLE Meta ADD area STRING;
ALTER TABLE Meta ADD category STRING;
ALTER TABLE Meta ADD motivation STRING;
ALTER TABLE Meta ADD evidence STRING[];
ALTER TABLE Meta ADD risk STRING;
ALTER TABLE Meta ADD effort STRING;
ALTER TABLE Meta ADD impact STRING;
MATCH (t:Tally) CREATE (:Meta {key: 'tally:' + t.key, kind: 'tally', id: t.key, n: t.n});
MATCH (b:ManagedBlock) CREATE (:Meta {key: 'block:' + b.id, kind: 'block', id: b.id, path: b.path, name: b.name,
  hash: b.hash, glue: b.glue, created_file: b.created_file, flag: b.flag, updated_at: b.updated_at});
MATCH (p:Preference) CREATE (:Meta {key: 'pref:' + p.id, kind: 'pref', id: p.id, pkey: p.key, value: p.value,
  previous: p.previous, action: p.action, at: p.at, source: p.source, session: p.session});
MATCH (s:Score) CREATE (:Meta {key: 'score:' + s.id, kind: 'score', id: s.id, at: s.at, accuracy: s.accuracy,
  usefulness: s.usefulness, efficiency: s.efficiency, tone: s.tone, proactiveness: s.proactiveness,
  average: s.average, notes: s.notes, session: s.session});
MATCH (t:Topic) CREATE (:Meta {key: 'topic:' + t.name, kind: 'topic', id: t.name, keywords: t.keywords,
  built_at: t.built_at});
MATCH (k:Skill) CREATE (:Meta {key: 'skill:' + k.slug, kind: 'skill', id: k.slug, name: k.name,
  description: k.description, created: k.created, updated: k.updated, source: k.source, triggers: k.triggers,
  tools: k.tools, path: k.path, session: k.session, revisions: k.revisions});
MATCH (d:Decision) CREATE (:Meta {key: 'decision:' + d.id, kind: 'decision', id: d.id, a: d.a, b: d.b,
  score_a: d.score_a, score_b: d.score_b, parts_a: d.parts_a, parts_b: d.parts_b, winner: d.winner,
  status: d.status, override: d.override, reason: d.reason, created_at: d.created_at, decided_at: d.decided_at});
MATCH (q:Proposal) CREATE (:Meta {key: 'proposal:' + q.id, kind: 'proposal', id: q.id, number: q.number,
  type: q.type, target: q.target, target_kind: q.target_kind, change: q.change, text: q.text,
  hypothesis: q.hypothesis, priority: q.priority, area: q.area, category: q.category, motivation: q.motivation,
  evidence: q.evidence, risk: q.risk, effort: q.effort, impact: q.impact, status: q.status, reason: q.reason,
  created_at: q.created_at, decided_at: q.decided_at});
CREATE REL TABLE about_moved(FROM Node TO Meta, score DOUBLE, created_at TIMESTAMP);
CREATE REL TABLE learned_from_moved(FROM Meta TO Node, created_at TIMESTAMP);
CREATE REL TABLE decision_about_moved(FROM Meta TO Node, created_at TIMESTAMP);
CREATE REL TABLE proposal_about_moved(FROM Meta TO Node, created_at TIMESTAMP);
CREATE REL TABLE proposal_change_moved(FROM Meta TO Change, created_at TIMESTAMP);
MATCH (n:Node)-[a:about]->(t:Topic), (m:Meta) WHERE m.key = 'topic:' + t.name
CREATE (n)-[:about_moved {score: a.score, created_at: a.created_at}]->(m);
MATCH (k:Skill)-[l:learned_from]->(n:Node), (m:Meta) WHERE m.key = 'skill:' + k.slug
CREATE (m)-[:learned_from_moved {created_at: l.created_at}]->(n);
MATCH (d:Decision)-[x:decision_about]->(n:Node), (m:Meta) WHERE m.key = 'decision:' + d.id
CREATE (m)-[:decision_about_moved {created_at: x.created_at}]->(n);
MATCH (q:Proposal)-[x:proposal_about]->(n:Node), (m:Meta) WHERE m.key = 'proposal:' + q.id
CREATE (m)-[:proposal_about_moved {created_at: x.created_at}]->(n);
MATCH (q:Proposal)-[x:proposal_change]->(c:Change), (m:Meta) WHERE m.key = 'proposal:' + q.id
CREATE (m)-[:proposal_change_moved {created_at: x.created_at}]->(c);
DROP TABLE about;
DROP TABLE learned_from;
DROP TABLE decision_about;
DROP TABLE proposal_about;
DROP TABLE proposal_change;
DROP TABLE Tally;
DROP TABLE ManagedBlock;
DROP TABLE Preference;
DROP TABLE Score;
DROP TABLE Topic;
DROP TABLE Skill;
DROP TABLE Decision;
DROP TABLE Proposal;
ALTER TABLE about_moved RENAME TO about;
ALTER TABLE learned_from_moved RENAME TO learned_from;
ALTER TABLE decision_about_moved RENAME TO decision_about;
ALTER TABLE proposal_about_moved RENAME TO proposal_about;
ALTER TABLE proposal_change_moved RENAME TO proposal_change;
