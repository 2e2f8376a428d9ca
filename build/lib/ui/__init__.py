"""Shared Streamlit widgets and plotly figure builders (no computation here: see engine/)."""
