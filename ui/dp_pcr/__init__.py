"""The dp_pcr page's code beside its entry point pages/dp_pcr.py."""
