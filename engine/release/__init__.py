"""Releases: the manifest builder (``manifest``), the one JSON encoder (``export``), data fingerprints
(``fingerprint``), the owner's private workbook (``workbook``), the travel fields of a regression release
(``travel``) and applying such a release to new spectra (``predict``)."""
