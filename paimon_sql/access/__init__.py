"""Who may do what: grants from a policy file, checked against what each statement needs.

``policy`` reads the file (light: the server reads it before Spark starts), ``statement`` works
out a parsed statement's needs (which privilege on which table or database), ``rules`` applies a
user's row filters and column masks to a read, ``control`` holds one user's grants and refuses what
they do not cover. The server gives each client session an ``AccessControl``; the library's own
sessions have none.
"""
