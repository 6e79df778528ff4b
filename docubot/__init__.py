"""DocuBot: answers questions about a company's markdown documentation, with sources, offline by default."""

__version__ = "0.1.0"
