#ifndef GATEHOUSE_LIBPQ_H
#define GATEHOUSE_LIBPQ_H
// libpq, loaded when the first PostgreSQL connection is made rather than
// linked (libpq_loader.c): a responder on SQLite, the default, maps none of
// libpq and the twenty libraries it brings (GnuTLS, Kerberos, LDAP, SASL),
// 3.3 MB resident per process, and a machine without PostgreSQL needs no
// libpq5. The header comes from libpq-dev at build time; the library
// (libpq.so.5, Debian's libpq5) is needed at run time only with
// GATEHOUSE_DATABASE_URL set.
#include <postgresql/libpq-fe.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

// PG_DIAG_SQLSTATE is a character-constant macro ('C'); Swift imports it
// as nothing useful, so the field code comes from here.
static inline int gatehouse_pg_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int gatehouse_pg_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }

// 1 once libpq is loaded, which must come before any call below; 0 when it
// cannot be, with the reason in gatehouse_libpq_error(). Thread-safe.
int gatehouse_libpq_load(void);
const char *gatehouse_libpq_error(void);

// libpq's functions of the same names, through the loaded library.
PGconn *gatehouse_PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname);
ConnStatusType gatehouse_PQstatus(const PGconn *conn);
char *gatehouse_PQerrorMessage(const PGconn *conn);
void gatehouse_PQfinish(PGconn *conn);
PQnoticeProcessor gatehouse_PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg);
int gatehouse_PQsocket(const PGconn *conn);
int gatehouse_PQsendQuery(PGconn *conn, const char *query);
int gatehouse_PQsendPrepare(PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes);
int gatehouse_PQsendQueryPrepared(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat);
int gatehouse_PQflush(PGconn *conn);
int gatehouse_PQconsumeInput(PGconn *conn);
int gatehouse_PQisBusy(PGconn *conn);
PGresult *gatehouse_PQgetResult(PGconn *conn);
ExecStatusType gatehouse_PQresultStatus(const PGresult *res);
char *gatehouse_PQresultErrorField(const PGresult *res, int fieldcode);
int gatehouse_PQntuples(const PGresult *res);
int gatehouse_PQnfields(const PGresult *res);
Oid gatehouse_PQftype(const PGresult *res, int field_num);
char *gatehouse_PQgetvalue(const PGresult *res, int tup_num, int field_num);
int gatehouse_PQgetlength(const PGresult *res, int tup_num, int field_num);
int gatehouse_PQgetisnull(const PGresult *res, int tup_num, int field_num);
char *gatehouse_PQcmdTuples(PGresult *res);
void gatehouse_PQclear(PGresult *res);
PGnotify *gatehouse_PQnotifies(PGconn *conn);
void gatehouse_PQfreemem(void *ptr);
#endif
