"""The var_admm page's code beside its entry point pages/var_admm.py."""
