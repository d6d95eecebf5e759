// The libcurl loader: see include/gatehouse_curl_loader.h.
#include "gatehouse_curl_loader.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

// Every libcurl function Gatehouse calls, resolved at each load.
static struct {
    void *library;
    __typeof__(&curl_global_init) global_init;
    __typeof__(&curl_global_cleanup) global_cleanup;
    __typeof__(&curl_easy_init) easy_init;
    __typeof__(&curl_easy_cleanup) easy_cleanup;
    __typeof__(&curl_easy_perform) easy_perform;
    __typeof__(&curl_easy_strerror) easy_strerror;
    __typeof__(&curl_easy_setopt) easy_setopt;
    __typeof__(&curl_easy_getinfo) easy_getinfo;
    __typeof__(&curl_slist_append) slist_append;
    __typeof__(&curl_slist_free_all) slist_free_all;
} table;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long holders;
static char error[256];

#define RESOLVE(field, name) \
    if (!(table.field = (__typeof__(table.field))dlsym(table.library, name))) { \
        snprintf(error, sizeof error, "libcurl.so.4 has no %s", name); goto fail; }

// Under the lock, with no holder.
static int load(void) {
    // RTLD_LOCAL: its symbols stay out of the process's namespace, so a
    // process that also links libcurl (the mail sender) keeps its own calls.
    table.library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!table.library) {
        const char *why = dlerror();
        snprintf(error, sizeof error, "%s", why ? why : "dlopen(libcurl.so.4) failed");
        return 0;
    }
    RESOLVE(global_init, "curl_global_init")
    RESOLVE(global_cleanup, "curl_global_cleanup")
    RESOLVE(easy_init, "curl_easy_init")
    RESOLVE(easy_cleanup, "curl_easy_cleanup")
    RESOLVE(easy_perform, "curl_easy_perform")
    RESOLVE(easy_strerror, "curl_easy_strerror")
    RESOLVE(easy_setopt, "curl_easy_setopt")
    RESOLVE(easy_getinfo, "curl_easy_getinfo")
    RESOLVE(slist_append, "curl_slist_append")
    RESOLVE(slist_free_all, "curl_slist_free_all")
    {
        CURLcode code = table.global_init(CURL_GLOBAL_DEFAULT);
        if (code != CURLE_OK) {
            snprintf(error, sizeof error, "curl_global_init: %s", table.easy_strerror(code));
            goto fail;
        }
    }
    return 1;
fail:
    dlclose(table.library);
    memset(&table, 0, sizeof table);
    return 0;
}

int gatehouse_dlcurl_acquire(void) {
    pthread_mutex_lock(&lock);
    int ok = table.library != NULL || load();
    if (ok) holders += 1;
    pthread_mutex_unlock(&lock);
    return ok;
}

void gatehouse_dlcurl_release(int unload_when_idle) {
    pthread_mutex_lock(&lock);
    holders -= 1;
    if (holders == 0 && unload_when_idle && table.library) {
        // curl_global_cleanup is not thread-safe: no holder is left, and
        // every new one waits for this lock.
        table.global_cleanup();
        dlclose(table.library);
        memset(&table, 0, sizeof table);
    }
    pthread_mutex_unlock(&lock);
}

const char *gatehouse_dlcurl_error(void) { return error; }

int gatehouse_dlcurl_is_loaded(void) {
    pthread_mutex_lock(&lock);
    int loaded = table.library != NULL;
    pthread_mutex_unlock(&lock);
    return loaded;
}

CURL *gatehouse_dlcurl_easy_init(void) { return table.easy_init(); }
void gatehouse_dlcurl_easy_cleanup(CURL *handle) { table.easy_cleanup(handle); }
CURLcode gatehouse_dlcurl_easy_perform(CURL *handle) { return table.easy_perform(handle); }
const char *gatehouse_dlcurl_easy_strerror(CURLcode code) { return table.easy_strerror(code); }
struct curl_slist *gatehouse_dlcurl_slist_append(struct curl_slist *list, const char *string) { return table.slist_append(list, string); }
void gatehouse_dlcurl_slist_free_all(struct curl_slist *list) { table.slist_free_all(list); }
CURLcode gatehouse_dlcurl_setopt_long(CURL *handle, CURLoption option, long value) { return table.easy_setopt(handle, option, value); }
CURLcode gatehouse_dlcurl_setopt_string(CURL *handle, CURLoption option, const char *value) { return table.easy_setopt(handle, option, value); }
CURLcode gatehouse_dlcurl_setopt_pointer(CURL *handle, CURLoption option, void *value) { return table.easy_setopt(handle, option, value); }
CURLcode gatehouse_dlcurl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) { return table.easy_setopt(handle, option, value); }
CURLcode gatehouse_dlcurl_setopt_blob_copy(CURL *handle, CURLoption option, const void *data, size_t length) {
    struct curl_blob blob = { (void *)data, length, CURL_BLOB_COPY };
    return table.easy_setopt(handle, option, &blob);
}
CURLcode gatehouse_dlcurl_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback callback) { return table.easy_setopt(handle, option, callback); }
CURLcode gatehouse_dlcurl_getinfo_long(CURL *handle, CURLINFO info, long *value) { return table.easy_getinfo(handle, info, value); }
CURLcode gatehouse_dlcurl_getinfo_string(CURL *handle, CURLINFO info, const char **value) { return table.easy_getinfo(handle, info, value); }
