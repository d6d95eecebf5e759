#ifndef GATEHOUSE_CSQLITE_SHIM_H
#define GATEHOUSE_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift cannot import: it tells SQLite to copy
// bound text and blobs before the bind call returns.
static inline sqlite3_destructor_type gatehouse_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}
#endif
