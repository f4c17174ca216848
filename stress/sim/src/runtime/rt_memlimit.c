/*
 * rt_memlimit.c - the simulated device memory's size: ACLSIM_DEVICE_MEMORY=BYTES.
 *
 * Unset (or empty): no total limit; one allocation may not exceed 64 GiB (a 910B3's HBM) and
 * aclrtGetMemInfo reports 64 GiB.  Set: aclrtMalloc refuses an allocation that would take the
 * bytes live across all allocations past BYTES, with ACL_ERROR_RT_MEMORY_ALLOCATION (207001,
 * "memory allocation error, only used by out of memory" in hicann/runtime rt_error_codes.h), and
 * aclrtGetMemInfo reports BYTES as the HBM total.  BYTES is a positive integer, optionally
 * followed by K, M, G or T (binary multiples: 1G = 2^30).  Read at aclInit.
 */
#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "rt_private.h"

#define DEFAULT_DEVICE_BYTES ((uint64_t)64 << 30)

static _Atomic uint64_t g_limit; /* 0: unset */

static int suffix_shift(char c)
{
    switch (toupper((unsigned char)c)) {
    case 'K':
        return 10;
    case 'M':
        return 20;
    case 'G':
        return 30;
    case 'T':
        return 40;
    default:
        return -1;
    }
}

int rt_devmem_configure(const char *spec, char *err, size_t cap)
{
    atomic_store(&g_limit, 0);
    if (!spec || !*spec)
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(spec, &end, 10);
    int shift = 0;
    if (end && *end && end[1] == '\0' && (shift = suffix_shift(*end)) >= 0)
        end++;
    if (errno || end == spec || !isdigit((unsigned char)spec[0]) || (end && *end) || v == 0 ||
        (shift > 0 && v > (UINT64_MAX >> shift))) {
        aclsim_format(err, cap,
                      "ACLSIM_DEVICE_MEMORY must be a positive number of bytes, optionally with "
                      "K, M, G or T (got '%s'): fix or unset it",
                      spec);
        return -1;
    }
    atomic_store(&g_limit, (uint64_t)v << shift);
    return 0;
}

uint64_t rt_devmem_limit(void)
{
    return atomic_load(&g_limit);
}

uint64_t rt_devmem_total(void)
{
    uint64_t limit = atomic_load(&g_limit);
    return limit ? limit : DEFAULT_DEVICE_BYTES;
}
