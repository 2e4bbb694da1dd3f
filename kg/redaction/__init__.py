"""Secrets never reach storage: the rule set (gitleaks' and kg's own, as data in rules/) and the one
gate every text passes before it is cut, lowercased, keyed or written."""
