"""The shipped test kit: fluent builders of facts, a one-call way to run cycles on them
(`scenario`), and the one way to open a session on them (`sessions`).

Used by vscheduler's own tests and by plugin authors.
"""
