"""The local engine: a connection (catalog, device, memory) and the results of its queries."""
