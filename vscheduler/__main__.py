"""`python -m vscheduler` runs the command line."""

from __future__ import annotations

import sys

from vscheduler import cli

if __name__ == "__main__":
    sys.exit(cli.main())
