"""The p3ls page's code beside its entry point pages/p3ls.py."""
