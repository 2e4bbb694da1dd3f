"""The memory layer: sessions (L1), the user model (L3: preferences), skills, memory search, topic recall,
memory injection, self-scores and retention.

Each module is a small set of functions over a `Workspace`; pure decisions (ranking, topic detection, the
skill-generation condition, trend arrows) are plain functions over plain values and a frozen rules object
loaded from `rules/memory.toml` and `rules/topics.toml`.
"""
