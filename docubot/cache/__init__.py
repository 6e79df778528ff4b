"""Answer caches and their invalidation when the corpus changes."""
