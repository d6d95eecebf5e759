#ifndef GATEHOUSE_CPOSTGRESQL_SHIM_H
#define GATEHOUSE_CPOSTGRESQL_SHIM_H
#include <libpq-fe.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

// PG_DIAG_SQLSTATE is a character-constant macro ('C'); Swift imports it
// as nothing useful, so the field code comes from here.
static inline int gatehouse_pg_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int gatehouse_pg_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
#endif
