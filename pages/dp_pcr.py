"""DP-PCR page: the entry point. The page is ``ui.dp_pcr.sections`` (data, the planner, public information, the
fit, exports, the sweep beside strict edPLS); widgets only, the math is ``engine.methods.dp_pcr``.
"""
from ui.dp_pcr.sections import main

main()
