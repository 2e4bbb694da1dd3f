// The memory layer (issue 5): the user model, scores, skills and topics.
// Preference rows are a history: one row per change (set, unset, or a hand edit kg noticed in
// memory/preferences.json), so drift is visible; the current value is the newest row per key.
CREATE NODE TABLE Preference(id STRING PRIMARY KEY, key STRING, value STRING, previous STRING, action STRING, at TIMESTAMP, source STRING, session STRING);
// A self-assessment, `kg score A U E T P`: five 0-10 integers, their average and optional notes.
CREATE NODE TABLE Score(id STRING PRIMARY KEY, at TIMESTAMP, accuracy INT64, usefulness INT64, efficiency INT64, tone INT64, proactiveness INT64, average DOUBLE, notes STRING, session STRING);
// A reusable procedure; memory/skills/<slug>.md is its rendering and may be edited by hand.
CREATE NODE TABLE Skill(slug STRING PRIMARY KEY, name STRING, description STRING, created TIMESTAMP, updated TIMESTAMP, source STRING, triggers STRING[], tools STRING[], path STRING, session STRING, revisions INT64);
CREATE REL TABLE learned_from(FROM Skill TO Node, created_at TIMESTAMP);
// Topics from rules/topics.toml; `kg index build` links knowledge nodes to the topic they are about.
CREATE NODE TABLE Topic(name STRING PRIMARY KEY, keywords STRING[], built_at TIMESTAMP);
CREATE REL TABLE about(FROM Node TO Topic, score DOUBLE, created_at TIMESTAMP);
