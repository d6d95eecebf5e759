/*
 * The physical reference of Scripts/bench: the least a FastCGI responder can
 * do, written in C against libfcgi (the library Gatehouse's responders use),
 * with no Gatehouse code. Two of these behind a bare nginx with the same TLS
 * settings and no access log are what /api/data is measured against.
 *
 *   cc -O2 -o hello-fcgi hello-fcgi.c -lfcgi   (Scripts/lib/bench_physical.py)
 */
#include <fcgiapp.h>

int main(void)
{
    FCGX_Request request;
    if (FCGX_Init() != 0 || FCGX_InitRequest(&request, 0, 0) != 0)
        return 1;
    while (FCGX_Accept_r(&request) >= 0) {
        FCGX_PutS("Status: 200 OK\r\nContent-Type: application/json\r\n\r\n{\"hello\":\"world\"}", request.out);
        FCGX_Finish_r(&request);
    }
    return 0;
}
