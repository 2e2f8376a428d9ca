"""The dp_cca page's code beside its entry point pages/dp_cca.py."""
