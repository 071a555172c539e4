"""paimon-sql-server: a HiveServer2 Thrift endpoint so JDBC/ODBC drivers and BI tools run SQL on Paimon tables.

A call travels: main (the command line) -> transport (binary or http, SASL PLAIN, TLS; auth checks
passwords; protocol encodes in C) -> service (sessions, operations; metadata answers the catalog calls;
rowset turns Arrow into Thrift result sets) -> the same front layer as ``Session.sql``. dialect is the
SQLAlchemy ``paimon://`` dialect for clients.
"""
