"""DocuBot measuring itself: retrieval, refusal and answer evaluation on labelled sets."""
