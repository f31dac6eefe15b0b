"""Actions: the ordered steps of a cycle. Each changes the session only through Statements."""
