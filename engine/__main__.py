"""``python -m engine``: the command line for batch jobs (``engine.cli.commands``)."""
import sys

from engine.cli.commands import main

sys.exit(main())
