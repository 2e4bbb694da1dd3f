// Issue 17: every Kùzu node table costs ~6 MB of the read server's memory when the database opens, whatever its
// rows; relationship tables cost ~0. Four small tables move into Meta as kinds of row, so the graph opens with
// four tables fewer: Tally (the counts of `kg status`), ManagedBlock (the marked blocks kg writes), Preference
// (the history of the user's preferences) and Score (self-assessments). Each row's key carries its kind
// ('tally:' + its key, 'block:' + its id, 'pref:' + its id, 'score:' + its id), so every lookup by key stays a
// primary-key lookup; `id` holds the old key. A Preference's own `key` column is `pkey` here (Meta's key is the
// row's). The four kinds hold tens to hundreds of rows whatever the graph's size; the large tables (Session,
// Change, PatternRank, PendingHigh ...) stay their own, so a scan of them reads no other rows. The analyst still
// sees the four as tables of their own names (kg/analysis/snapshot.py splits Meta by kind, kg/store/schema.py
// MERGED_KINDS). Meta's own rows (migrations, flags) are kind 'meta'.
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
MATCH (t:Tally) CREATE (:Meta {key: 'tally:' + t.key, kind: 'tally', id: t.key, n: t.n});
MATCH (b:ManagedBlock) CREATE (:Meta {key: 'block:' + b.id, kind: 'block', id: b.id, path: b.path, name: b.name,
  hash: b.hash, glue: b.glue, created_file: b.created_file, flag: b.flag, updated_at: b.updated_at});
MATCH (p:Preference) CREATE (:Meta {key: 'pref:' + p.id, kind: 'pref', id: p.id, pkey: p.key, value: p.value,
  previous: p.previous, action: p.action, at: p.at, source: p.source, session: p.session});
MATCH (s:Score) CREATE (:Meta {key: 'score:' + s.id, kind: 'score', id: s.id, at: s.at, accuracy: s.accuracy,
  usefulness: s.usefulness, efficiency: s.efficiency, tone: s.tone, proactiveness: s.proactiveness,
  average: s.average, notes: s.notes, session: s.session});
DROP TABLE Tally;
DROP TABLE ManagedBlock;
DROP TABLE Preference;
DROP TABLE Score;
