#ifndef GATEHOUSE_CCURL_SHIM_H
#define GATEHOUSE_CCURL_SHIM_H
// libcurl (Debian libcurl4-openssl-dev): SMTP submission for the mail
// sender, behind SMTPClient's CurlEasyHandle, which alone uses it. Linked
// only by what depends on SMTPClient: libcurl brings some thirty libraries
// (about 6 MB resident), which the responders must not map.
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic: Swift cannot call
// them, so one typed wrapper per argument type used.
static inline CURLcode gatehouse_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gatehouse_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gatehouse_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gatehouse_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gatehouse_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gatehouse_curl_setopt_read_function(CURL *handle, curl_read_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
}
// struct curl_blob by value: libcurl copies the bytes (CURL_BLOB_COPY), so
// the caller's buffer need not outlive the call.
static inline CURLcode gatehouse_curl_setopt_blob_copy(CURL *handle, CURLoption option, const void *data, size_t length) {
    struct curl_blob blob = { (void *)data, length, CURL_BLOB_COPY };
    return curl_easy_setopt(handle, option, &blob);
}
static inline CURLcode gatehouse_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

// CURL_GLOBAL_DEFAULT is a macro of macros; Swift does not import it.
static inline CURLcode gatehouse_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}
#endif
