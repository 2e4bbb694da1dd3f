// Team graph queries (FalkorDB only: on Kùzu, nodes carry no workspace or agent). Used by kg/store/team.py.

// name: team_contributors
// Who contributed to the team graph: nodes and events per workspace and agent, and their latest.
MATCH (n:Node) WHERE n.workspace IS NOT NULL
RETURN n.workspace AS workspace, n.agent AS agent, count(n) AS nodes,
       CAST(sum(CASE WHEN n.kind = 'event' THEN 1 ELSE 0 END) AS INT64) AS events, max(n.created_at) AS last_at
ORDER BY events DESC, workspace, agent
