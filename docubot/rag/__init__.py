"""Retrieval-augmented answering: retrieve, refuse or prompt, generate, validate."""
