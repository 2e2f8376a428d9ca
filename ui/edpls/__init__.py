"""The edpls page's code beside its entry point pages/edpls.py."""
