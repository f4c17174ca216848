/*
 * rt_sanitize.c - the sanitizer's shadow state (ACLSIM_SANITIZE, docs/sanitizer.md).
 *
 * The lookups every access makes (initcheck, racecheck) are in rt_sanitize_access.c; this file
 * holds the configuration and the table of shadow entries: device allocations, registered
 * buffers, the outputs a launch owns.
 *
 * Every device allocation (and every simulator-internal buffer a fault shares between calls,
 * registered with aclsim_san_region) has a shadow entry:
 *   - initcheck: one byte per device byte, set when the byte is written (H2D / D2D copy, memset,
 *     a kernel store).  A D2H copy, a D2D copy or a kernel load of unset bytes is a finding.
 *     Launching a call clears the bytes of its outputs: they are the call's to write, and what
 *     the host wrote there before (a canary) is not the call's result.
 *   - racecheck: access records (range, read/write, actor and clock, call, stage, source line),
 *     checked against every new access: two accesses of one range, one a write, whose actors
 *     are not ordered (rt_sanitize_order.c) are a RAW/WAR/WAW hazard naming both calls.  A
 *     registered buffer also reports a call that reads back a value another call wrote over its
 *     own (the host-side tiling race, ordered on one thread but still wrong).
 *   - memcheck: refused ranges are classified (out of bounds, use after free, invalid address),
 *     frees checked (double / invalid free), and at aclFinalize live allocations and objects are
 *     leaks.
 * All state is guarded by rt_san_mu.  Shadow memory costs one byte per device byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACLSIM_SAN_PRIVATE
#include "aclsim_dtype.h"
#include "rt_private.h"
#include "sanitize.h"

san_alloc **rt_san_tab;
int rt_san_n;
static int g_cap;
static uint64_t g_next_id;

/* ---- configuration ------------------------------------------------------------------------- */

int aclsim_san_configure(const char *spec, const char *log, char *err, size_t cap)
{
    int on = 0;
    const char *p = spec ? spec : "";
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 9 && strncmp(p, "initcheck", len) == 0)
            on |= ACLSIM_SAN_INITCHECK;
        else if (len == 9 && strncmp(p, "racecheck", len) == 0)
            on |= ACLSIM_SAN_RACECHECK;
        else if (len == 8 && strncmp(p, "memcheck", len) == 0)
            on |= ACLSIM_SAN_MEMCHECK;
        else if (len == 3 && strncmp(p, "all", len) == 0)
            on |= ACLSIM_SAN_INITCHECK | ACLSIM_SAN_RACECHECK | ACLSIM_SAN_MEMCHECK;
        else if (len) {
            snprintf(err, cap,
                     "ACLSIM_SANITIZE: unknown tool '%.*s' (use a comma-separated list of "
                     "initcheck, racecheck, memcheck, or all)",
                     (int)len, p);
            return -1;
        }
        p += len + (p[len] == ',');
    }
    pthread_mutex_lock(&rt_san_mu);
    int rc = on ? rt_san_report_open(log, err, cap) : 0;
    pthread_mutex_unlock(&rt_san_mu);
    if (rc)
        return -1;
    aclsim_sanitize_on = on;
    return 0;
}

/* ---- the allocation table (lock held) -------------------------------------------------------- */

int rt_san_find_le(uintptr_t p)
{
    int lo = 0, hi = rt_san_n - 1, best = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (rt_san_tab[mid]->base <= p) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return best;
}

san_alloc *rt_san_find(const void *p)
{
    int i = rt_san_find_le((uintptr_t)p);
    if (i < 0)
        return NULL;
    san_alloc *a = rt_san_tab[i];
    return (uintptr_t)p < a->base + (a->size ? a->size : 1) ? a : NULL;
}

static san_alloc *insert(uintptr_t base, uint64_t size, const char *kind)
{
    if (rt_san_n == g_cap) {
        int nc = g_cap ? 2 * g_cap : 256;
        san_alloc **nt = realloc(rt_san_tab, (size_t)nc * sizeof *nt);
        if (!nt)
            return NULL;
        rt_san_tab = nt;
        g_cap = nc;
    }
    san_alloc *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->base = base;
    a->size = size;
    a->id = ++g_next_id;
    a->kind = kind;
    int i = rt_san_find_le(base) + 1;
    memmove(&rt_san_tab[i + 1], &rt_san_tab[i], (size_t)(rt_san_n - i) * sizeof *rt_san_tab);
    rt_san_tab[i] = a;
    rt_san_n++;
    return a;
}

static void drop(san_alloc *a)
{
    free(a->written);
    free(a->recs);
    free(a);
}

void rt_san_remove_at(int i)
{
    drop(rt_san_tab[i]);
    memmove(&rt_san_tab[i], &rt_san_tab[i + 1], (size_t)(rt_san_n - i - 1) * sizeof *rt_san_tab);
    rt_san_n--;
}

/* ---- allocations, outputs, regions --------------------------------------------------------- */

void aclsim_san_alloc(const void *base, uint64_t size)
{
    pthread_mutex_lock(&rt_san_mu);
    san_alloc *a = insert((uintptr_t)base, size, "device");
    if (a && (aclsim_sanitize_on & ACLSIM_SAN_INITCHECK))
        a->written = calloc(size, 1);
    pthread_mutex_unlock(&rt_san_mu);
}

void aclsim_san_region(const void *p, uint64_t n, const char *name)
{
    if (!(aclsim_sanitize_on & ACLSIM_SAN_RACECHECK) || !p || !n)
        return;
    pthread_mutex_lock(&rt_san_mu);
    if (!rt_san_find(p))
        insert((uintptr_t)p, n, name);
    pthread_mutex_unlock(&rt_san_mu);
}

void aclsim_san_region_drop(const void *p, const char *name)
{
    if (!(aclsim_sanitize_on & ACLSIM_SAN_RACECHECK) || !p)
        return;
    pthread_mutex_lock(&rt_san_mu);
    int i = rt_san_find_le((uintptr_t)p);
    if (i >= 0 && rt_san_tab[i]->base == (uintptr_t)p && !strcmp(rt_san_tab[i]->kind, name))
        rt_san_remove_at(i);
    pthread_mutex_unlock(&rt_san_mu);
}

void aclsim_san_output_range(const void *p, uint64_t n, uint64_t call, const char *op,
                         const char *name)
{
    pthread_mutex_lock(&rt_san_mu);
    san_alloc *a = rt_san_find(p);
    if (a && a->written) {
        uint64_t lo = (uintptr_t)p - a->base, hi = lo + n > a->size ? a->size : lo + n;
        memset(a->written + lo, 0, hi - lo);
        int keep = 0;
        for (int i = 0; i < a->nown; i++) /* an owner this output replaces goes */
            if (a->owners[i].hi <= lo || a->owners[i].lo >= hi)
                a->owners[keep++] = a->owners[i];
        a->nown = keep;
        if (keep == OWNERS)
            memmove(a->owners, a->owners + 1, (OWNERS - 1) * sizeof *a->owners), a->nown--;
        san_owner *o = &a->owners[a->nown++];
        o->lo = lo;
        o->hi = hi;
        o->call = call;
        o->op = op;
        snprintf(o->name, sizeof o->name, "%s", name ? name : "");
    }
    pthread_mutex_unlock(&rt_san_mu);
}
