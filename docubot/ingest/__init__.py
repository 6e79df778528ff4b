"""Ingestion: markdown files → parsed pages → chunks → embeddings in the store."""
