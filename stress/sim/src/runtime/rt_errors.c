/*
 * rt_errors.c - the per-thread "recent error message" behind aclGetRecentErrMsg.
 *
 * Each thread has a pending message (set by any failing simulator call in that thread) and a
 * returned message: aclGetRecentErrMsg moves pending -> returned and clears pending, so only
 * the pointer from the latest aclGetRecentErrMsg call stays valid (as documented for CANN).
 * With nothing pending it returns "" rather than NULL, so a careless `.decode()` still works.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rt_private.h"

static __thread char tls_pending[ACLSIM_MSG_CAP];
static __thread int tls_has_pending;
static __thread char tls_returned[ACLSIM_MSG_CAP];

int aclsim_set_error(int code, const char *fmt, ...)
{
    char suffix[24];
    int slen = snprintf(suffix, sizeof suffix, " [%d]", code);
    size_t room = sizeof tls_pending - (size_t)slen; /* keep space for the code suffix */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tls_pending, room, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : ((size_t)n >= room ? room - 1 : (size_t)n);
    memcpy(tls_pending + len, suffix, (size_t)slen + 1);
    tls_has_pending = 1;
    return code;
}

void aclsim_format(char *buf, size_t cap, const char *fmt, ...)
{
    if (!buf || cap == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}

ACLSIM_API const char *aclGetRecentErrMsg(void)
{
    if (!tls_has_pending)
        return "";
    memcpy(tls_returned, tls_pending, sizeof tls_returned);
    tls_has_pending = 0;
    tls_pending[0] = '\0';
    return tls_returned;
}
