/*
 * rt_sanitize_mem.c - memcheck: refused ranges classified (out of bounds, use after free,
 * invalid address), overwritten guards, double / invalid frees, and at aclFinalize the leaks
 * (live device allocations and objects).  Shares rt_sanitize.c's allocation table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACLSIM_SAN_PRIVATE
#include "rt_private.h"
#include "sanitize.h"

#define FREED_RING 1024

static struct {
    uintptr_t base;
    uint64_t size, id;
} g_freed[FREED_RING];
static uint64_t g_n_freed;

/* ---- memcheck ------------------------------------------------------------------------------ */

static void mem_finding(const char *kind, uint64_t bytes, const san_alloc *a, const void *addr,
                        const char *who, const char *note)
{
    rt_san_finding f = {.tool = "memcheck", .kind = kind, .bytes = bytes, .note = note};
    if (a) {
        rt_san_fill_where(&f, a, (uintptr_t)addr >= a->base ? (uintptr_t)addr - a->base : 0);
        f.address = addr;
    } else {
        f.address = addr;
        f.tensor = "";
    }
    f.n_sides = 1;
    f.sides[0] = rt_san_side_here(ACLSIM_SAN_RW, "", 0, who);
    f.sides[0].access = kind;
    rt_san_report(&f);
}

static int freed_index(uintptr_t p, int exact)
{
    uint64_t n = g_n_freed < FREED_RING ? g_n_freed : FREED_RING;
    for (uint64_t k = 0; k < n; k++) {
        int i = (int)((g_n_freed - 1 - k) % FREED_RING);
        if (exact ? p == g_freed[i].base
                  : p >= g_freed[i].base && p < g_freed[i].base + g_freed[i].size)
            return i;
    }
    return -1;
}

void aclsim_san_free(const void *ptr, int found, const void *inside)
{
    pthread_mutex_lock(&rt_san_mu);
    if (found) {
        int i = rt_san_find_le((uintptr_t)ptr);
        if (i >= 0 && rt_san_tab[i]->base == (uintptr_t)ptr) {
            int k = (int)(g_n_freed++ % FREED_RING);
            g_freed[k].base = rt_san_tab[i]->base;
            g_freed[k].size = rt_san_tab[i]->size;
            g_freed[k].id = rt_san_tab[i]->id;
            rt_san_remove_at(i);
        }
    } else if (aclsim_sanitize_on & ACLSIM_SAN_MEMCHECK) {
        if (inside)
            mem_finding("illegal free", 0, rt_san_find(inside), ptr, "aclrtFree",
                        "the address is inside a device allocation but not its start");
        else if (freed_index((uintptr_t)ptr, 1) >= 0)
            mem_finding("double free", 0, NULL, ptr, "aclrtFree",
                        "the allocation was freed already");
        else
            mem_finding("illegal free", 0, NULL, ptr, "aclrtFree",
                        "not an address aclrtMalloc returned");
    }
    pthread_mutex_unlock(&rt_san_mu);
}

void aclsim_san_bad_range(const char *who, const void *p, uint64_t n, int mode)
{
    if (!(aclsim_sanitize_on & ACLSIM_SAN_MEMCHECK))
        return;
    const char *rw = mode == ACLSIM_SAN_R ? "illegal read" : "illegal write";
    pthread_mutex_lock(&rt_san_mu);
    san_alloc *a = rt_san_find(p);
    char note[160];
    if (a) {
        uint64_t past = (uintptr_t)p + n - (a->base + a->size);
        snprintf(note, sizeof note, "out of bounds: %llu bytes past the end of the allocation",
                 (unsigned long long)past);
        mem_finding(rw, n, a, p, who, note);
    } else if (freed_index((uintptr_t)p, 0) >= 0) {
        mem_finding(mode == ACLSIM_SAN_R ? "use after free (read)" : "use after free (write)", n,
                    NULL, p, who, "the device allocation was freed before this access");
    } else {
        mem_finding(rw, n, NULL, p, who, "not inside any live device allocation");
    }
    pthread_mutex_unlock(&rt_san_mu);
}

void aclsim_san_guard(const void *base, uint64_t size, uint64_t first_bad, const char *who)
{
    if (!(aclsim_sanitize_on & ACLSIM_SAN_MEMCHECK))
        return;
    pthread_mutex_lock(&rt_san_mu);
    san_alloc *a = rt_san_find(base);
    mem_finding("illegal write", 1, a, (const uint8_t *)base + size + first_bad, who,
                "out of bounds: the guard bytes after the allocation were overwritten");
    pthread_mutex_unlock(&rt_san_mu);
}

static void object_leaks(void)
{
    static const struct {
        int kind;
        const char *name;
    } kinds[] = {{ACLSIM_KIND_TENSOR, "aclTensor"},         {ACLSIM_KIND_SCALAR, "aclScalar"},
                 {ACLSIM_KIND_INT_ARRAY, "aclIntArray"},    {ACLSIM_KIND_FLOAT_ARRAY, "aclFloatArray"},
                 {ACLSIM_KIND_BOOL_ARRAY, "aclBoolArray"},  {ACLSIM_KIND_TENSOR_LIST, "aclTensorList"},
                 {ACLSIM_KIND_SCALAR_LIST, "aclScalarList"}, {ACLSIM_KIND_EXECUTOR, "aclOpExecutor"}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        int64_t live = aclsim_obj_live((aclsim_kind)kinds[i].kind);
        if (live <= 0)
            continue;
        char note[128];
        snprintf(note, sizeof note, "%lld %s object(s) alive at aclFinalize (bytes = count)",
                 (long long)live, kinds[i].name);
        rt_san_finding f = {.tool = "memcheck", .kind = "object leak", .bytes = (uint64_t)live,
                            .alloc_kind = kinds[i].name, .tensor = "", .note = note};
        f.n_sides = 1;
        f.sides[0] = rt_san_side_here(ACLSIM_SAN_RW, "", 0, "aclFinalize");
        f.sides[0].access = "leak";
        rt_san_report(&f);
    }
}

void aclsim_san_finalize(void)
{
    if (!aclsim_sanitize_on)
        return;
    pthread_mutex_lock(&rt_san_mu);
    if (aclsim_sanitize_on & ACLSIM_SAN_MEMCHECK) {
        for (int i = 0; i < rt_san_n; i++)
            if (rt_san_tab[i]->written || strcmp(rt_san_tab[i]->kind, "device") == 0)
                mem_finding("leak", rt_san_tab[i]->size, rt_san_tab[i], (const void *)rt_san_tab[i]->base,
                            "aclFinalize", "device memory not freed before aclFinalize");
        object_leaks();
    }
    while (rt_san_n)
        rt_san_remove_at(rt_san_n - 1);
    g_n_freed = 0;
    rt_san_report_close();
    aclsim_sanitize_on = 0;
    pthread_mutex_unlock(&rt_san_mu);
    rt_san_order_reset();
    rt_san_calls_reset();
}
