"""Releases: the manifest builder (``manifest``), the one JSON encoder (``export``), data fingerprints
(``fingerprint``) and the owner's private workbook (``workbook``)."""
