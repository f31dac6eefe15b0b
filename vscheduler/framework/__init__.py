"""The session runtime: where actions and plugins meet. No I/O; reads only a snapshot."""
