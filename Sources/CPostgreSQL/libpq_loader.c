// The libpq loader: see include/gatehouse_libpq.h.
#include "gatehouse_libpq.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// Every libpq function Gatehouse calls, resolved once; `loaded` only when
// all of them were found.
static struct {
    int loaded;
    char error[256];
    __typeof__(&PQconnectdbParams) PQconnectdbParams;
    __typeof__(&PQstatus) PQstatus;
    __typeof__(&PQerrorMessage) PQerrorMessage;
    __typeof__(&PQfinish) PQfinish;
    __typeof__(&PQsetNoticeProcessor) PQsetNoticeProcessor;
    __typeof__(&PQsocket) PQsocket;
    __typeof__(&PQsendQuery) PQsendQuery;
    __typeof__(&PQsendPrepare) PQsendPrepare;
    __typeof__(&PQsendQueryPrepared) PQsendQueryPrepared;
    __typeof__(&PQflush) PQflush;
    __typeof__(&PQconsumeInput) PQconsumeInput;
    __typeof__(&PQisBusy) PQisBusy;
    __typeof__(&PQgetResult) PQgetResult;
    __typeof__(&PQresultStatus) PQresultStatus;
    __typeof__(&PQresultErrorField) PQresultErrorField;
    __typeof__(&PQntuples) PQntuples;
    __typeof__(&PQnfields) PQnfields;
    __typeof__(&PQftype) PQftype;
    __typeof__(&PQgetvalue) PQgetvalue;
    __typeof__(&PQgetlength) PQgetlength;
    __typeof__(&PQgetisnull) PQgetisnull;
    __typeof__(&PQcmdTuples) PQcmdTuples;
    __typeof__(&PQclear) PQclear;
    __typeof__(&PQnotifies) PQnotifies;
    __typeof__(&PQfreemem) PQfreemem;
} table;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void missing(const char *name) {
    snprintf(table.error, sizeof table.error, "libpq.so.5 has no %s", name);
}

static void resolve(void) {
    void *handle = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(table.error, sizeof table.error, "%s", why ? why : "dlopen(libpq.so.5) failed");
        return;
    }
    if (!(table.PQconnectdbParams = (__typeof__(&PQconnectdbParams))dlsym(handle, "PQconnectdbParams"))) { missing("PQconnectdbParams"); return; }
    if (!(table.PQstatus = (__typeof__(&PQstatus))dlsym(handle, "PQstatus"))) { missing("PQstatus"); return; }
    if (!(table.PQerrorMessage = (__typeof__(&PQerrorMessage))dlsym(handle, "PQerrorMessage"))) { missing("PQerrorMessage"); return; }
    if (!(table.PQfinish = (__typeof__(&PQfinish))dlsym(handle, "PQfinish"))) { missing("PQfinish"); return; }
    if (!(table.PQsetNoticeProcessor = (__typeof__(&PQsetNoticeProcessor))dlsym(handle, "PQsetNoticeProcessor"))) { missing("PQsetNoticeProcessor"); return; }
    if (!(table.PQsocket = (__typeof__(&PQsocket))dlsym(handle, "PQsocket"))) { missing("PQsocket"); return; }
    if (!(table.PQsendQuery = (__typeof__(&PQsendQuery))dlsym(handle, "PQsendQuery"))) { missing("PQsendQuery"); return; }
    if (!(table.PQsendPrepare = (__typeof__(&PQsendPrepare))dlsym(handle, "PQsendPrepare"))) { missing("PQsendPrepare"); return; }
    if (!(table.PQsendQueryPrepared = (__typeof__(&PQsendQueryPrepared))dlsym(handle, "PQsendQueryPrepared"))) { missing("PQsendQueryPrepared"); return; }
    if (!(table.PQflush = (__typeof__(&PQflush))dlsym(handle, "PQflush"))) { missing("PQflush"); return; }
    if (!(table.PQconsumeInput = (__typeof__(&PQconsumeInput))dlsym(handle, "PQconsumeInput"))) { missing("PQconsumeInput"); return; }
    if (!(table.PQisBusy = (__typeof__(&PQisBusy))dlsym(handle, "PQisBusy"))) { missing("PQisBusy"); return; }
    if (!(table.PQgetResult = (__typeof__(&PQgetResult))dlsym(handle, "PQgetResult"))) { missing("PQgetResult"); return; }
    if (!(table.PQresultStatus = (__typeof__(&PQresultStatus))dlsym(handle, "PQresultStatus"))) { missing("PQresultStatus"); return; }
    if (!(table.PQresultErrorField = (__typeof__(&PQresultErrorField))dlsym(handle, "PQresultErrorField"))) { missing("PQresultErrorField"); return; }
    if (!(table.PQntuples = (__typeof__(&PQntuples))dlsym(handle, "PQntuples"))) { missing("PQntuples"); return; }
    if (!(table.PQnfields = (__typeof__(&PQnfields))dlsym(handle, "PQnfields"))) { missing("PQnfields"); return; }
    if (!(table.PQftype = (__typeof__(&PQftype))dlsym(handle, "PQftype"))) { missing("PQftype"); return; }
    if (!(table.PQgetvalue = (__typeof__(&PQgetvalue))dlsym(handle, "PQgetvalue"))) { missing("PQgetvalue"); return; }
    if (!(table.PQgetlength = (__typeof__(&PQgetlength))dlsym(handle, "PQgetlength"))) { missing("PQgetlength"); return; }
    if (!(table.PQgetisnull = (__typeof__(&PQgetisnull))dlsym(handle, "PQgetisnull"))) { missing("PQgetisnull"); return; }
    if (!(table.PQcmdTuples = (__typeof__(&PQcmdTuples))dlsym(handle, "PQcmdTuples"))) { missing("PQcmdTuples"); return; }
    if (!(table.PQclear = (__typeof__(&PQclear))dlsym(handle, "PQclear"))) { missing("PQclear"); return; }
    if (!(table.PQnotifies = (__typeof__(&PQnotifies))dlsym(handle, "PQnotifies"))) { missing("PQnotifies"); return; }
    if (!(table.PQfreemem = (__typeof__(&PQfreemem))dlsym(handle, "PQfreemem"))) { missing("PQfreemem"); return; }
    table.loaded = 1;
}

int gatehouse_libpq_load(void) {
    pthread_once(&once, resolve);
    return table.loaded;
}

const char *gatehouse_libpq_error(void) { return table.error; }

PGconn *gatehouse_PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname) { return table.PQconnectdbParams(keywords, values, expand_dbname); }
ConnStatusType gatehouse_PQstatus(const PGconn *conn) { return table.PQstatus(conn); }
char *gatehouse_PQerrorMessage(const PGconn *conn) { return table.PQerrorMessage(conn); }
void gatehouse_PQfinish(PGconn *conn) { table.PQfinish(conn); }
PQnoticeProcessor gatehouse_PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg) { return table.PQsetNoticeProcessor(conn, proc, arg); }
int gatehouse_PQsocket(const PGconn *conn) { return table.PQsocket(conn); }
int gatehouse_PQsendQuery(PGconn *conn, const char *query) { return table.PQsendQuery(conn, query); }
int gatehouse_PQsendPrepare(PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes) { return table.PQsendPrepare(conn, stmtName, query, nParams, paramTypes); }
int gatehouse_PQsendQueryPrepared(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat) { return table.PQsendQueryPrepared(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat); }
int gatehouse_PQflush(PGconn *conn) { return table.PQflush(conn); }
int gatehouse_PQconsumeInput(PGconn *conn) { return table.PQconsumeInput(conn); }
int gatehouse_PQisBusy(PGconn *conn) { return table.PQisBusy(conn); }
PGresult *gatehouse_PQgetResult(PGconn *conn) { return table.PQgetResult(conn); }
ExecStatusType gatehouse_PQresultStatus(const PGresult *res) { return table.PQresultStatus(res); }
char *gatehouse_PQresultErrorField(const PGresult *res, int fieldcode) { return table.PQresultErrorField(res, fieldcode); }
int gatehouse_PQntuples(const PGresult *res) { return table.PQntuples(res); }
int gatehouse_PQnfields(const PGresult *res) { return table.PQnfields(res); }
Oid gatehouse_PQftype(const PGresult *res, int field_num) { return table.PQftype(res, field_num); }
char *gatehouse_PQgetvalue(const PGresult *res, int tup_num, int field_num) { return table.PQgetvalue(res, tup_num, field_num); }
int gatehouse_PQgetlength(const PGresult *res, int tup_num, int field_num) { return table.PQgetlength(res, tup_num, field_num); }
int gatehouse_PQgetisnull(const PGresult *res, int tup_num, int field_num) { return table.PQgetisnull(res, tup_num, field_num); }
char *gatehouse_PQcmdTuples(PGresult *res) { return table.PQcmdTuples(res); }
void gatehouse_PQclear(PGresult *res) { table.PQclear(res); }
PGnotify *gatehouse_PQnotifies(PGconn *conn) { return table.PQnotifies(conn); }
void gatehouse_PQfreemem(void *ptr) { table.PQfreemem(ptr); }
