"""Keep the server's imported modules out of Python's full garbage collections (``gc.freeze``), once per import.

Why: Streamlit runs ``gc.collect(2)`` after every script run (``runner.postScriptGC``, on by default), and a full
collection walks every tracked object of the process while holding the GIL. Once plotly, pandas, scikit-learn,
scipy and the engine are imported that is ~200,000 objects: 0.15-0.17 s per collection measured on this machine,
more than half of a warm edPLS page run's server time (0.28 s). Sessions run side by side in one process, so every
session's run stopped for every other session's collection: with 8 sessions opening edPLS at once, a profile
(py-spy) of the server put most of its samples on that one line.

What this does: after a run that imported new modules (``len(sys.modules)`` grew), one ``gc.collect()`` and then
``gc.freeze()`` move every object alive at that moment (the modules, their functions and constants) into the
permanent generation, which later collections skip; the post-run collection then walks only what sessions created
since, and the time it takes no longer grows with the libraries the app imports. Freezing is the standard library's
own tool for this (``gc.freeze``: "ignore all objects tracked so far"); nothing here is written by hand but the rule
of when to call it.

Cost, and why it stays bounded: an object frozen while alive is still freed by reference counting; only a reference
cycle among frozen objects is never collected. Objects of sessions that happen to be alive at a freeze are frozen
with the modules, but a freeze happens only when a run imported modules, which stops once every page has been
visited (a finite number of times per server process), so that memory is bounded too.
"""
from __future__ import annotations

import gc
import sys
import threading

__all__ = ["freeze_after_imports"]

_LOCK = threading.Lock()
_FROZEN_AT = [0]  # len(sys.modules) at the last freeze


def freeze_after_imports() -> bool:
    """Freeze the objects alive now if modules were imported since the last freeze; True when it froze.

    Call it at the end of the app's script (``app.py``), after the page ran: the page's modules are imported by then.
    """
    n_modules = len(sys.modules)
    if n_modules <= _FROZEN_AT[0]:
        return False
    with _LOCK:
        if n_modules <= _FROZEN_AT[0]:
            return False
        gc.collect()  # garbage made so far is freed, not frozen
        gc.freeze()
        _FROZEN_AT[0] = len(sys.modules)
    return True
