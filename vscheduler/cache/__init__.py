"""The truth between cycles: watch events in, cheap consistent snapshots out."""
