"""The calculator page's code beside its entry point pages/calculator.py."""
