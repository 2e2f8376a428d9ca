"""The run report (``report``) and its figures (``figures``)."""
