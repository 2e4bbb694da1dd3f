"""The write path, from an acknowledged entry to the graph. `journal` acknowledges a write without waiting
for the graph; `apply` turns its records into nodes, links and patterns; `drain` applies the journal in
bounded batches, hands the graph over, and quarantines what it cannot apply; `background` is the thread that
drains a held-open workspace; `batch` logs a whole conversation or transcript in one pass (`kg ingest`);
`importing`, `trail` and `jsonstream` stream the seed's files in (`kg import trail`)."""
