"""The HTTP API (FastAPI, Server-Sent Events) and the web chat page: `docubot serve`."""
