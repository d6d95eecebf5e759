#ifndef GATEHOUSE_CSQLITE_SHIM_H
#define GATEHOUSE_CSQLITE_SHIM_H
#include <sqlite3.h>
#include <stdint.h>
#include <time.h>

// SQLITE_TRANSIENT is a cast macro Swift cannot import: it tells SQLite to copy
// bound text and blobs before the bind call returns.
static inline sqlite3_destructor_type gatehouse_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

// A busy handler is a C callback; kept here so Swift only passes the timeout.
// SQLite's default one sleeps 1, 2, 5, 10, 15, 20, 25... ms between tries,
// but Gatehouse's write transactions last well under a millisecond, so a
// waiting responder would leave its core idle long after the lock is free.
// This one retries every 50 us for the first 2 ms, then every millisecond,
// until the timeout (milliseconds, the context pointer) has passed.
static int gatehouse_busy_wait(void *timeout_ms, int tries) {
    long waited_us = tries < 40 ? tries * 50L : 2000L + (tries - 40) * 1000L;
    if (waited_us >= (long)(intptr_t)timeout_ms * 1000L) return 0;
    struct timespec pause = { 0, tries < 40 ? 50000L : 1000000L };
    nanosleep(&pause, NULL);
    return 1;
}

static inline int gatehouse_sqlite_set_busy_timeout(sqlite3 *db, int timeout_ms) {
    return sqlite3_busy_handler(db, gatehouse_busy_wait, (void *)(intptr_t)timeout_ms);
}
#endif
