"""paimon-sql-server: a HiveServer2 Thrift endpoint so JDBC/ODBC drivers and BI tools run SQL on Paimon tables.

main (command line) -> transport (binary/http, SASL PLAIN, TLS; auth checks users) -> service (sessions,
operations) -> the same front layer as ``Session.sql``.
"""
