// Issue 17: the decay pass's staging table (LcStage, migration 0002) exists only while a pass uses it: it is made
// when a cycle stages its decay decisions and dropped after (kg/store/bulk.py `staging`, its columns in
// kg/store/schema.py STAGING_DDL). Every node table costs memory at each open of the graph whatever its rows (an
// empty LcStage: 5.3 MB resident at 100k entries, in the read server and in every one-off command), and this one
// is empty between two passes. A team graph (FalkorDB) keeps no tables: its staged nodes are only emptied.
DROP TABLE IF EXISTS LcStage;
