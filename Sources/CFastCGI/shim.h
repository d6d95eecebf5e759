#ifndef GATEHOUSE_CFASTCGI_SHIM_H
#define GATEHOUSE_CFASTCGI_SHIM_H
// libfcgi's request-level API. FCGX_FPrintF is variadic and cannot be called
// from Swift; responders write with FCGX_PutStr instead.
#include <fcgiapp.h>
#include <malloc.h>
#include <sys/ioctl.h>
#include <unistd.h>

// The responder process's allocator policy lives beside its accept loop:
// Swift's Glibc module does not export <malloc.h>, so mallopt is wrapped.
static inline int gatehouse_set_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

// FastCGI keep-alive without stalls (FastCGIServer.serve): libfcgi keeps a
// connection open after a request whose FCGI_BEGIN_REQUEST asked for it
// (nginx's fastcgi_keep_conn) and then blocks reading it for the next
// request. These two read and drop that kept connection; libfcgi's header
// lists the field among the request's own, which is why it is wrapped here.
static inline int gatehouse_fcgx_kept_connection(const FCGX_Request *request) {
    return request->ipcFd;
}

// Closes a kept connection that carries no request (its streams were freed
// by FCGX_Finish_r), so the next FCGX_Accept_r accepts a new one.
static inline void gatehouse_fcgx_drop_kept_connection(FCGX_Request *request) {
    if (request->ipcFd >= 0) {
        close(request->ipcFd);
        request->ipcFd = -1;
    }
}

// A connection nginx closes after this request (no fastcgi_keep_conn) is
// closed by libfcgi with a "lingering close": shutdown, then wait up to 2 s
// for nginx to close its end, so that data still unread on our side never
// makes the kernel reset the connection under a response nginx has not
// read yet. When the request's stdin was read to its end and nothing else
// waits unread, there is nothing to reset: close at once, and the responder
// goes back to accept() instead of waiting for nginx's turn on the CPU.
// libfcgi skips the linger for a "detached" request (FCGX_Free).
static inline void gatehouse_fcgx_close_at_once_if_drained(FCGX_Request *request) {
    int unread = -1;
    if (!request->keepConnection && request->ipcFd >= 0 && request->in != NULL && FCGX_HasSeenEOF(request->in) != 0
        && ioctl(request->ipcFd, FIONREAD, &unread) == 0 && unread == 0) {
        request->detached = 1;
    }
}
#endif
