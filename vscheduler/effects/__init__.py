"""Out to the cluster: a cycle's decisions become API calls, off the cycle thread."""
