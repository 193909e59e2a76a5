#ifndef OFFPEAK_CCURL_SHIM_H
#define OFFPEAK_CCURL_SHIM_H

#include <curl/curl.h>
#include <stdint.h>
#include <stddef.h>

/* OpenSSL (libcurl's TLS library) frees its global state from an atexit handler. A transfer thread
   still inside libcurl when the process exits then reads freed memory and the process dies of
   SIGSEGV on its way out. OpenSSL can be asked not to register that handler: the memory goes with
   the process anyway. Declared here so no OpenSSL header is needed. */
int OPENSSL_init_crypto(uint64_t opts, const void *settings);

static inline int offpeak_openssl_without_atexit_cleanup(void) {
    return OPENSSL_init_crypto(0x00080000L /* OPENSSL_INIT_NO_ATEXIT */, NULL);
}

// curl_easy_setopt is variadic, which Swift cannot call; these typed wrappers can be.
static inline CURLcode offpeak_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode offpeak_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode offpeak_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode offpeak_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode offpeak_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*offpeak_curl_write_callback)(char *data, size_t size, size_t count, void *userdata);

static inline CURLcode offpeak_curl_setopt_write_callback(CURL *handle, CURLoption option,
                                                          offpeak_curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode offpeak_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

// CURLMsg keeps a finished transfer's result in a union, which Swift reads awkwardly.
static inline CURLcode offpeak_curl_msg_result(const CURLMsg *message) {
    return message->data.result;
}

#endif
