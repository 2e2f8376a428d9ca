"""Reconstruction attacks, one module per threat model."""
