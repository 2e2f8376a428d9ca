"""edPLS page: the entry point. The page's sections are ``ui.edpls.sections`` (data, the planner, preprocessing,
the strict or paper fit, results, exports), ``ui.edpls.analysis`` (sweep, simulation), ``ui.edpls.fits`` (cached
fits) and ``ui.edpls.exports``; widgets only, the math is ``engine.methods.edpls``.
"""
from ui.edpls.sections import main

main()
