"""The store the core works on, as Paimon's ``FileStore``: below the table built from it."""
