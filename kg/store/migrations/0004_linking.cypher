// Auto-linking (issue 3): how many nodes hold each keyword, so a new node can query the full-text index
// with its rarest terms only (a common term makes the index query slow and narrows nothing down).
// Keys are linking keywords (stemmed, stopwords dropped; see kg/graph/linking.py); the row '#docs' counts the
// nodes. kg fills the table on first use, and `kg link reindex` recounts it after a bulk load.
CREATE NODE TABLE Term(term STRING PRIMARY KEY, df INT64);
