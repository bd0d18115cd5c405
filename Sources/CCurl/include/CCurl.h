#ifndef CCURL_H
#define CCURL_H
// libcurl for TartilNet, loaded on first use instead of linked: libcurl brings some thirty libraries (TLS,
// Kerberos, LDAP, SSH, IDN, compression…) whose loading and relocation cost about 3 ms at every start of tartil,
// and most commands (playing from the cache, the journal, listings) never download. curl.h is used for its
// types and constants only; every call goes through a function below, which calls libcurl through a pointer
// found by dlsym. `ccurl_load` must have succeeded before any other.
#include <curl/curl.h>

// The oldest libcurl tartil works with, stated here only: 7.85.0 added CURLOPT_PROTOCOLS_STR and
// CURLOPT_REDIR_PROTOCOLS_STR, which keep transfers and redirects to http and https (the older bitmask options are
// deprecated). `ccurl_load` refuses an older libcurl, and every curl_easy_setopt is checked besides.
#define CCURL_MINIMUM_VERSION_NUM 0x075500
#define CCURL_MINIMUM_VERSION "7.85.0"

// Whether a libcurl version number (curl_version_info's version_num, 0xXXYYZZ) is CCURL_MINIMUM_VERSION or later.
static inline int ccurl_version_supported(unsigned int version_num) {
    return version_num >= CCURL_MINIMUM_VERSION_NUM;
}

// Loads libcurl.so.4 (once, from any thread), checks its version and runs curl_global_init. Returns NULL, or why
// not (text that stays as it is).
const char *ccurl_load(void);

CURL *ccurl_easy_init(void);
void ccurl_easy_cleanup(CURL *handle);
const char *ccurl_easy_strerror(CURLcode code);

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed function per
// argument type.
CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode ccurl_easy_setopt_write_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *));
CURLcode ccurl_easy_setopt_header_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *));
CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value);

CURLM *ccurl_multi_init(void);
CURLMcode ccurl_multi_cleanup(CURLM *multi);
CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
CURLMcode ccurl_multi_add_handle(CURLM *multi, CURL *handle);
CURLMcode ccurl_multi_remove_handle(CURLM *multi, CURL *handle);
CURLMcode ccurl_multi_perform(CURLM *multi, int *running);
CURLMsg *ccurl_multi_info_read(CURLM *multi, int *remaining);
CURLMcode ccurl_multi_poll(CURLM *multi, int timeout_ms);
CURLMcode ccurl_multi_wakeup(CURLM *multi);

// curl_version_info(CURLVERSION_NOW) (a macro aliasing an enum case, which Swift does not import).
curl_version_info_data *ccurl_version_info_now(void);
#endif
