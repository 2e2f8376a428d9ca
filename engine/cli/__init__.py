"""The command line (``commands``: argparse, ``python -m engine``) and its batch fits (``batch``).

``engine.cli.main`` is the console-script target.
"""
from engine.cli.commands import main

__all__ = ["main"]
