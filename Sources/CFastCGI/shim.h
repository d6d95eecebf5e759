#ifndef GATEHOUSE_CFASTCGI_SHIM_H
#define GATEHOUSE_CFASTCGI_SHIM_H
// libfcgi's request-level API. FCGX_FPrintF is variadic and cannot be called
// from Swift; responders write with FCGX_PutStr instead.
#include <fcgiapp.h>
#endif
