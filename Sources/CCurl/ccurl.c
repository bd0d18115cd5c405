#include "CCurl.h"
#include "CLoad.h"
#include <stdio.h>
#include <string.h>

// The libcurl functions tartil uses, found in libcurl.so.4 by CLoad.
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd[], unsigned int, int, int *);
    CURLMcode (*multi_wakeup)(CURLM *);
    curl_version_info_data *(*version_info)(CURLversion);
} curl;

static const cload_function functions[] = {
    {"curl_global_init", (void **)&curl.global_init},
    {"curl_easy_init", (void **)&curl.easy_init},
    {"curl_easy_cleanup", (void **)&curl.easy_cleanup},
    {"curl_easy_strerror", (void **)&curl.easy_strerror},
    {"curl_easy_setopt", (void **)&curl.easy_setopt},
    {"curl_easy_getinfo", (void **)&curl.easy_getinfo},
    {"curl_multi_init", (void **)&curl.multi_init},
    {"curl_multi_cleanup", (void **)&curl.multi_cleanup},
    {"curl_multi_setopt", (void **)&curl.multi_setopt},
    {"curl_multi_add_handle", (void **)&curl.multi_add_handle},
    {"curl_multi_remove_handle", (void **)&curl.multi_remove_handle},
    {"curl_multi_perform", (void **)&curl.multi_perform},
    {"curl_multi_info_read", (void **)&curl.multi_info_read},
    {"curl_multi_poll", (void **)&curl.multi_poll},
    {"curl_multi_wakeup", (void **)&curl.multi_wakeup},
    {"curl_version_info", (void **)&curl.version_info},
};

// Once every function is found: a libcurl new enough, initialized.
static int prepare(char *failure, size_t capacity) {
    curl_version_info_data *info = curl.version_info(CURLVERSION_NOW);
    if (!info || !ccurl_version_supported(info->version_num)) {
        snprintf(failure, capacity, "libcurl %s is too old: tartil needs libcurl " CCURL_MINIMUM_VERSION
                 " or later (for CURLOPT_PROTOCOLS_STR, which keeps downloads to http and https)",
                 info && info->version ? info->version : "(unknown version)");
        return -1;
    }
    CURLcode code = curl.global_init(CURL_GLOBAL_DEFAULT);
    if (code != CURLE_OK) {
        snprintf(failure, capacity, "curl_global_init failed: %s", curl.easy_strerror(code));
        return -1;
    }
    return 0;
}

static cload_library library = CLOAD_LIBRARY(
    "libcurl.so.4", "libcurl", " (libcurl " CCURL_MINIMUM_VERSION " or later is needed)", functions, sizeof functions / sizeof *functions,
    prepare);

const char *ccurl_load(void) { return cload(&library); }

CURL *ccurl_easy_init(void) { return curl.easy_init(); }
void ccurl_easy_cleanup(CURL *handle) { curl.easy_cleanup(handle); }
const char *ccurl_easy_strerror(CURLcode code) { return curl.easy_strerror(code); }

CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_write_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *)) {
    return curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, function);
}
CURLcode ccurl_easy_setopt_header_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *)) {
    return curl.easy_setopt(handle, CURLOPT_HEADERFUNCTION, function);
}
CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl.easy_getinfo(handle, info, value);
}
CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl.easy_getinfo(handle, info, value);
}
CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl.easy_getinfo(handle, info, value);
}

CURLM *ccurl_multi_init(void) { return curl.multi_init(); }
CURLMcode ccurl_multi_cleanup(CURLM *multi) { return curl.multi_cleanup(multi); }
CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl.multi_setopt(multi, option, value);
}
CURLMcode ccurl_multi_add_handle(CURLM *multi, CURL *handle) { return curl.multi_add_handle(multi, handle); }
CURLMcode ccurl_multi_remove_handle(CURLM *multi, CURL *handle) { return curl.multi_remove_handle(multi, handle); }
CURLMcode ccurl_multi_perform(CURLM *multi, int *running) { return curl.multi_perform(multi, running); }
CURLMsg *ccurl_multi_info_read(CURLM *multi, int *remaining) { return curl.multi_info_read(multi, remaining); }
CURLMcode ccurl_multi_poll(CURLM *multi, int timeout_ms) { return curl.multi_poll(multi, NULL, 0, timeout_ms, NULL); }
CURLMcode ccurl_multi_wakeup(CURLM *multi) { return curl.multi_wakeup(multi); }

curl_version_info_data *ccurl_version_info_now(void) { return curl.version_info(CURLVERSION_NOW); }
