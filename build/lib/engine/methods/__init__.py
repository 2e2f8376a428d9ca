"""Private multivariate methods, one module each (edpls, pca_gauss, dp_cca, p3ls, var_admm)."""
