"""The adapter to the API server: the only package that imports `kubernetes`."""
