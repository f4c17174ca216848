/*
 * rt_sanitize_state.c - the sanitizer's state that every part of it reads (sanitize.h): which
 * tools are on (aclsim_sanitize_on, set at aclInit), the one lock that guards the shadow state,
 * the ordering tables and the log (rt_san_mu), and the calling thread's place: the task it
 * executes, its call and stage (rt_san_ctx).  Nothing here calls anything, so the shadow state
 * (rt_sanitize.c, rt_sanitize_access.c), the ordering (rt_sanitize_order.c), the calls
 * (rt_sanitize_calls.c) and the report (rt_sanitize_report.c) can all read it without reading
 * each other.
 */
#include <pthread.h>

#define ACLSIM_SAN_PRIVATE
#include "rt_private.h"
#include "sanitize.h"

#undef aclsim_sanitize_on /* the variable itself, even in an ACLSIM_NO_SANITIZE build */
int aclsim_sanitize_on;

pthread_mutex_t rt_san_mu = PTHREAD_MUTEX_INITIALIZER;

__thread rt_san_ctx_t rt_san_ctx;
