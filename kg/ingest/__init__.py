"""Getting acknowledged writes from the journal into the graph: `apply` turns records into nodes, links and
patterns; `drain` applies the journal in bounded batches, hands the graph over, and quarantines what it cannot
apply; `background` is the thread that drains a held-open workspace; `batch` logs a whole conversation or
transcript in one pass (`kg ingest`)."""
