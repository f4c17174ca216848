/*
 * rt_sysparam.c - system parameters (aclSysParamOpt): a process-level value, and an optional
 * override in the calling thread's current context; aclsim_sys_param() gives the effective one
 * for the calling thread.
 */
#include "rt_context.h"

static atomic_llong g_opts[RT_N_OPTS];

int64_t aclsim_sys_param(int32_t opt)
{
    if (opt < 0 || opt >= RT_N_OPTS)
        return 0;
    rt_context *c = rt_current_acquire();
    if (c) {
        pthread_mutex_lock(&c->mu);
        int set = c->opt_set[opt];
        int64_t v = c->opt_value[opt];
        pthread_mutex_unlock(&c->mu);
        aclsim_obj_release(&c->obj);
        if (set)
            return v;
    }
    return (int64_t)atomic_load(&g_opts[opt]);
}

int aclsim_deterministic(void)
{
    return aclsim_sys_param(ACL_OPT_DETERMINISTIC) != 0;
}

static int check_opt(const char *api, int32_t opt)
{
    if (opt < 0 || opt >= RT_N_OPTS)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                                "%s: opt %d is not an aclSysParamOpt (0 DETERMINISTIC, "
                                "1 ENABLE_DEBUG_KERNEL, 2 STRONG_CONSISTENCY, 3 "
                                "ENABLE_KERNEL_EARLY_START)",
                                api, (int)opt);
    return 0;
}

/* A getter's arguments: the option, then the output pointer. */
static int check_get(const char *api, int32_t opt, const int64_t *value)
{
    int rc = check_opt(api, opt);
    if (!rc && !value)
        rc = aclsim_set_error(ACL_ERROR_INVALID_PARAM, "%s: value is NULL", api);
    return rc;
}

ACLSIM_API aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    int rc = check_opt("aclrtSetSysParamOpt", (int32_t)opt);
    if (rc)
        return rc;
    atomic_store(&g_opts[opt], (long long)value);
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    int rc = check_get("aclrtGetSysParamOpt", (int32_t)opt, value);
    if (rc)
        return rc;
    *value = (int64_t)atomic_load(&g_opts[opt]);
    return ACL_SUCCESS;
}

static rt_context *current_for(const char *api, int *rc)
{
    rt_context *c = rt_current_acquire();
    if (!c)
        *rc = aclsim_set_error(ACL_ERROR_RT_CONTEXT_NULL,
                               "%s: no current context in this thread (call aclrtSetDevice or "
                               "aclrtSetCurrentContext first)",
                               api);
    return c;
}

ACLSIM_API aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)
{
    int rc = check_opt("aclrtCtxSetSysParamOpt", (int32_t)opt);
    if (rc)
        return rc;
    rt_context *c = current_for("aclrtCtxSetSysParamOpt", &rc);
    if (!c)
        return rc;
    pthread_mutex_lock(&c->mu);
    c->opt_value[opt] = value;
    c->opt_set[opt] = 1;
    pthread_mutex_unlock(&c->mu);
    aclsim_obj_release(&c->obj);
    return ACL_SUCCESS;
}

ACLSIM_API aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value)
{
    int rc = check_get("aclrtCtxGetSysParamOpt", (int32_t)opt, value);
    if (rc)
        return rc;
    rt_context *c = current_for("aclrtCtxGetSysParamOpt", &rc);
    if (!c)
        return rc;
    aclsim_obj_release(&c->obj);
    *value = aclsim_sys_param((int32_t)opt); /* context value if set there, else process value */
    return ACL_SUCCESS;
}
