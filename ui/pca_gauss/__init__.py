"""The pca_gauss page's code beside its entry point pages/pca_gauss.py."""
