"""The home page's guided demo: its widget (``demo``), its story (``story``) and figures (``figures``)."""
