"""What the graph knows of itself: auto-linking, recurring patterns and neighbourhood queries."""
