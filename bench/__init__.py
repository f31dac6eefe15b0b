"""Benchmarks: programs that print JSON. Never timed assertions in tests."""
