"""The privacy_audit page's code beside its entry point pages/privacy_audit.py."""
