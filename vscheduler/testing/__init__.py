"""The shipped test kit: fluent builders of facts and a one-call way to run cycles on them.

Used by vscheduler's own tests and by plugin authors.
"""
