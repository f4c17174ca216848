/*
 * rt_init.c - aclInit / aclFinalize and the simulated device count.
 *
 * aclInit reads the process-wide configuration from the environment once:
 *   ACLSIM_DEVICES  number of simulated devices (default 8, 0..64)
 *   ACLSIM_FAULTS   comma-separated fault names (see rt_faults.c)
 * Any invalid value makes aclInit fail with ACL_ERROR_INVALID_PARAM and leaves the process
 * uninitialised.  aclFinalize only clears the initialised state: contexts, streams and memory
 * stay usable (the simulator never tears down threads behind the user's back).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_private.h"

#define DEFAULT_DEVICES 8

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_initialized;
static atomic_int g_device_count = -1; /* fixed at aclInit; -1 before the first one */

int rt_parse_device_count(int32_t *out, char *err, size_t cap)
{
    const char *s = getenv("ACLSIM_DEVICES");
    if (!s || !*s) {
        *out = DEFAULT_DEVICES;
        return 0;
    }
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    while (end && (*end == ' ' || *end == '\t'))
        end++;
    if (errno || end == s || (end && *end) || v < 0 || v > RT_MAX_DEVICES) {
        aclsim_format(err, cap,
                      "ACLSIM_DEVICES must be an integer in [0, %d] (got '%s'): fix or unset it",
                      RT_MAX_DEVICES, s);
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

int aclsim_initialized(void)
{
    return atomic_load(&g_initialized);
}

int32_t aclsim_device_count(void)
{
    int n = atomic_load(&g_device_count);
    if (n >= 0)
        return n;
    int32_t v;
    char err[256];
    return rt_parse_device_count(&v, err, sizeof err) == 0 ? v : -1;
}

ACLSIM_API aclError aclInit(const char *configPath)
{
    pthread_mutex_lock(&g_lock);
    if (atomic_load(&g_initialized)) {
        pthread_mutex_unlock(&g_lock);
        return aclsim_set_error(ACL_ERROR_REPEAT_INITIALIZE,
                                "aclInit: already initialised in this process (the repeat may be "
                                "ignored; one aclFinalize clears it)");
    }
    if (configPath && *configPath) {
        FILE *f = fopen(configPath, "r");
        if (!f) {
            pthread_mutex_unlock(&g_lock);
            return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                    "aclInit: configPath '%s' cannot be opened (%s): pass NULL or "
                                    "an existing JSON file",
                                    configPath, strerror(errno));
        }
        fclose(f); /* contents are ignored by the simulator */
    }
    char err[ACLSIM_MSG_CAP];
    int32_t ndev;
    if (rt_parse_device_count(&ndev, err, sizeof err) != 0) {
        pthread_mutex_unlock(&g_lock);
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclInit: %s", err);
    }
    if (rt_devmem_configure(getenv("ACLSIM_DEVICE_MEMORY"), err, sizeof err) != 0) {
        pthread_mutex_unlock(&g_lock);
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclInit: %s", err);
    }
    if (rt_faults_configure(getenv("ACLSIM_FAULTS"), err, sizeof err) != 0) {
        pthread_mutex_unlock(&g_lock);
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclInit: %s", err);
    }
    if (aclsim_san_configure(getenv("ACLSIM_SANITIZE"), getenv("ACLSIM_SANITIZE_LOG"), err,
                             sizeof err) != 0) {
        pthread_mutex_unlock(&g_lock);
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclInit: %s", err);
    }
    atomic_store(&g_device_count, ndev);
    atomic_store(&g_initialized, 1);
    pthread_mutex_unlock(&g_lock);
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclFinalize(void)
{
    pthread_mutex_lock(&g_lock);
    if (!atomic_load(&g_initialized)) {
        pthread_mutex_unlock(&g_lock);
        return aclsim_set_error(ACL_ERROR_REPEAT_FINALIZE,
                                "aclFinalize: not initialised (aclInit was not called, or "
                                "aclFinalize already ran)");
    }
    rt_faults_clear();
    if (aclsim_sanitize_on)
        aclsim_san_finalize(); /* leak report */
    atomic_store(&g_initialized, 0);
    pthread_mutex_unlock(&g_lock);
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtGetDeviceCount(uint32_t *count)
{
    if (!count)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is NULL");
    int32_t n = aclsim_device_count();
    if (n < 0) {
        char err[ACLSIM_MSG_CAP];
        int32_t v;
        rt_parse_device_count(&v, err, sizeof err);
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: %s", err);
    }
    *count = (uint32_t)n;
    return ACL_SUCCESS;
}
