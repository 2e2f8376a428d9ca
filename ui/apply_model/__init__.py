"""The "Apply a model" page's pieces (``view``): reading the two uploads and showing the predictions."""
