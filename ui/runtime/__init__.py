"""What serves only the app: the job runner (``jobs``) and the pages' worker tasks (``page_jobs``)."""
