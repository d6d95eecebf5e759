#ifndef GATEHOUSE_CURL_LOADER_H
#define GATEHOUSE_CURL_LOADER_H
// libcurl for outbound HTTPS (OutboundHTTPS), loaded while a transfer needs
// it rather than linked (curl_loader.c). libcurl brings some thirty
// libraries: linked, they cost every process that might make a request
// about 5.5 MB resident, which puts api-a and api-b, who fetch the issuer's
// JWKS once an hour or on an unknown kid, over their 20 MB budget. Loaded
// per transfer and let go afterwards, they pay it only while fetching.
// The header comes from libcurl4-openssl-dev at build time; the library
// (libcurl.so.4, Debian's libcurl4) is needed at run time.
#include <curl/curl.h>

// Takes a hold on libcurl, loading it (and running curl_global_init) if no
// one holds it: 1 on success, 0 with the reason in gatehouse_dlcurl_error().
// Every successful acquire needs one release. Thread-safe.
int gatehouse_dlcurl_acquire(void);
// Gives a hold back. The last release with `unload_when_idle` set runs
// curl_global_cleanup and unloads the library; without it, the library
// stays for the next transfer. Thread-safe.
void gatehouse_dlcurl_release(int unload_when_idle);
// Why the last acquire failed.
const char *gatehouse_dlcurl_error(void);
// 1 while libcurl is loaded (for tests of the unloading).
int gatehouse_dlcurl_is_loaded(void);

// libcurl's functions, through the loaded library: only between an acquire
// and its release. curl_easy_setopt and curl_easy_getinfo are variadic,
// which Swift cannot call, so one typed function per argument type used.
CURL *gatehouse_dlcurl_easy_init(void);
void gatehouse_dlcurl_easy_cleanup(CURL *handle);
CURLcode gatehouse_dlcurl_easy_perform(CURL *handle);
const char *gatehouse_dlcurl_easy_strerror(CURLcode code);
struct curl_slist *gatehouse_dlcurl_slist_append(struct curl_slist *list, const char *string);
void gatehouse_dlcurl_slist_free_all(struct curl_slist *list);
CURLcode gatehouse_dlcurl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode gatehouse_dlcurl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode gatehouse_dlcurl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode gatehouse_dlcurl_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
// CURLOPT_CAINFO_BLOB: libcurl copies the bytes (CURL_BLOB_COPY).
CURLcode gatehouse_dlcurl_setopt_blob_copy(CURL *handle, CURLoption option, const void *data, size_t length);
CURLcode gatehouse_dlcurl_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback callback);
CURLcode gatehouse_dlcurl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode gatehouse_dlcurl_getinfo_string(CURL *handle, CURLINFO info, const char **value);
#endif
