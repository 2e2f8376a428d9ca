"""``python -m engine``: the command line for batch jobs (``engine.cli``)."""
import sys

from engine.cli import main

sys.exit(main())
