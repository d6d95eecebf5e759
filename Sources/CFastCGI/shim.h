#ifndef GATEHOUSE_CFASTCGI_SHIM_H
#define GATEHOUSE_CFASTCGI_SHIM_H
// libfcgi's request-level API. FCGX_FPrintF is variadic and cannot be called
// from Swift; responders write with FCGX_PutStr instead.
#include <fcgiapp.h>
#include <malloc.h>

// The responder process's allocator policy lives beside its accept loop:
// Swift's Glibc module does not export <malloc.h>, so mallopt is wrapped.
static inline int gatehouse_set_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}
#endif
