"""PrivaLab computation engine.

Pure Python (numpy, scipy, scikit-learn, pandas); never imports streamlit, so every
function here is usable from a notebook or a script without the dashboard.
"""
