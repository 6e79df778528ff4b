"""Conversations: history, policies, rewriting, profile, cost."""
