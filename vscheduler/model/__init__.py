"""Pure, frozen vocabulary shared by every layer: no I/O, no kubernetes, no clock."""
