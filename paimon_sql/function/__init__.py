"""Catalog functions, as Paimon keeps them (Paimon's ``function`` package)."""
