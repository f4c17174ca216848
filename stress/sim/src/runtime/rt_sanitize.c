/*
 * rt_sanitize.c - the sanitizer's shadow state (ACLSIM_SANITIZE, docs/sanitizer.md).
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

#undef aclsim_sanitize_on /* the variable itself, even in an ACLSIM_NO_SANITIZE build */
int aclsim_sanitize_on;


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

/* ---- the accessor ------------------------------------------------------------------------- */

rt_san_side rt_san_side_here(int mode, const char *file, int line, const char *api)
{
    rt_san_side s = {0};
    s.call = rt_san_ctx.call;
    s.op = rt_san_ctx.call ? rt_san_ctx.op : api;
    s.stage = rt_san_ctx.call ? rt_san_ctx.stage : "runtime";
    s.access = mode == ACLSIM_SAN_R ? "Read" : mode == ACLSIM_SAN_W ? "Write" : "Read/Write";
    s.file = file;
    s.line = line;
    s.actor = rt_san_ctx.tok ? rt_san_ctx.tok->actor : 0;
    return s;
}

void rt_san_fill_where(rt_san_finding *f, const san_alloc *a, uint64_t lo)
{
    f->alloc_id = a->id;
    f->alloc_kind = a->kind;
    f->alloc_size = a->size;
    f->address = (const void *)(a->base + lo);
    f->offset = lo;
    f->tensor = "";
    for (int i = 0; i < a->nown; i++) {
        if (lo >= a->owners[i].lo && lo < a->owners[i].hi) {
            f->tensor = a->owners[i].name;
            f->owner_call = a->owners[i].call;
            f->owner_op = a->owners[i].op;
        }
    }
}

/* initcheck: report each run of never-written bytes in [lo, hi). */
static void check_written(const san_alloc *a, uint64_t lo, uint64_t hi, const rt_san_side *side)
{
    for (uint64_t i = lo; i < hi;) {
        if (a->written[i]) {
            const uint8_t *z = memchr(a->written + i, 0, hi - i);
            if (!z)
                break;
            i = (uint64_t)(z - a->written);
            continue;
        }
        uint64_t j = i;
        while (j < hi && !a->written[j])
            j++;
        rt_san_finding f = {.tool = "initcheck", .kind = "uninitialized read", .bytes = j - i};
        rt_san_fill_where(&f, a, i);
        f.n_sides = 1;
        f.sides[0] = *side;
        f.note = "";
        rt_san_report(&f);
        i = j;
    }
}

static const char *hazard(int prior, int now)
{
    if (prior & ACLSIM_SAN_W)
        return now & ACLSIM_SAN_W ? "WAW" : "RAW";
    return "WAR";
}

static void report_race(const san_alloc *a, const san_rec *r, uint64_t lo, uint64_t hi,
                        const char *kind, const rt_san_side *now, const char *note)
{
    rt_san_finding f = {.tool = "racecheck", .kind = kind, .bytes = hi - lo};
    rt_san_fill_where(&f, a, lo);
    f.n_sides = 2;
    f.sides[0] = r->side;
    f.sides[1] = *now;
    f.note = note;
    rt_san_report(&f);
}

/* racecheck against the records of a, then record this access. */
static void race(san_alloc *a, uint64_t lo, uint64_t hi, int mode, const rt_san_side *side)
{
    int actor;
    const uint32_t *vc;
    rt_san_clock(rt_san_ctx.tok, &actor, &vc);
    uint64_t last_call = (uint64_t)-1;
    for (int i = 0; i < a->nrec; i++) {
        san_rec *r = &a->recs[i];
        if (r->hi <= lo || r->lo >= hi || !((r->mode | mode) & ACLSIM_SAN_W))
            continue;
        if (r->actor == actor || r->clock <= vc[r->actor] || r->side.call == last_call)
            continue;
        last_call = r->side.call;
        report_race(a, r, lo > r->lo ? lo : r->lo, hi < r->hi ? hi : r->hi,
                    hazard(r->mode, mode), side, "the two accesses are not ordered by stream "
                    "order, synchronisation or events");
    }
    uint32_t clock = vc[actor];
    int keep = 0;
    for (int i = 0; i < a->nrec; i++) { /* drop what this access supersedes */
        san_rec *r = &a->recs[i];
        int covered = r->lo >= lo && r->hi <= hi;
        int ordered = r->actor == actor || r->clock <= vc[r->actor];
        if (!(covered && ordered && ((mode & ACLSIM_SAN_W) || r->mode == mode)))
            a->recs[keep++] = *r;
    }
    a->nrec = keep;
    for (int i = a->nrec - 1; i >= 0 && i >= a->nrec - 8; i--) { /* extend an adjacent one */
        san_rec *r = &a->recs[i];
        if (r->actor == actor && r->clock == clock && r->mode == mode &&
            r->side.call == side->call && r->side.line == side->line && r->lo <= hi &&
            lo <= r->hi) {
            r->lo = r->lo < lo ? r->lo : lo;
            r->hi = r->hi > hi ? r->hi : hi;
            return;
        }
    }
    if (a->nrec == a->caprec) {
        if (a->caprec == REC_CAP) {
            memmove(a->recs, a->recs + REC_CAP / 2, (REC_CAP / 2) * sizeof *a->recs);
            a->nrec = REC_CAP / 2;
        } else {
            int nc = a->caprec ? 2 * a->caprec : 8;
            san_rec *nr = realloc(a->recs, (size_t)nc * sizeof *nr);
            if (!nr)
                return;
            a->recs = nr;
            a->caprec = nc;
        }
    }
    a->recs[a->nrec++] = (san_rec){lo, hi, mode, actor, clock, *side};
}

/* A registered buffer: a call reading back what another call wrote over its own write. */
static void cross_call(san_alloc *a, uint64_t lo, uint64_t hi, int mode, const rt_san_side *side)
{
    if ((mode & ACLSIM_SAN_R) && side->call && a->nwriters && a->last_write.call != side->call) {
        for (int i = 0; i < a->nwriters; i++) {
            if (a->writers[i] != side->call)
                continue;
            san_rec r = {.side = a->last_write};
            report_race(a, &r, lo, hi, "RAW", side,
                        "this call reads a value another call wrote over this call's own write");
            break;
        }
    }
    if ((mode & ACLSIM_SAN_W) && side->call) {
        a->last_write = *side;
        if (a->nwriters == WRITERS)
            memmove(a->writers, a->writers + 1, (WRITERS - 1) * sizeof *a->writers);
        else
            a->nwriters++;
        a->writers[a->nwriters - 1] = side->call;
    }
}

static void access_locked(san_alloc *a, uint64_t lo, uint64_t hi, int mode,
                          const rt_san_side *side)
{
    if (hi > a->size)
        hi = a->size; /* the part past the end is memcheck's (guard bytes, pins) */
    if (lo >= hi)
        return;
    if ((aclsim_sanitize_on & ACLSIM_SAN_INITCHECK) && a->written) {
        if (mode & ACLSIM_SAN_R)
            check_written(a, lo, hi, side);
        if (mode & ACLSIM_SAN_W)
            memset(a->written + lo, 1, hi - lo);
    }
    if (aclsim_sanitize_on & ACLSIM_SAN_RACECHECK) {
        race(a, lo, hi, mode, side);
        if (!a->written)
            cross_call(a, lo, hi, mode, side);
    }
}

static void access_api(const void *p, uint64_t n, int mode, const char *file, int line,
                       const char *api)
{
    if (!n || !p)
        return;
    pthread_mutex_lock(&rt_san_mu);
    san_alloc *a = rt_san_find(p);
    if (a) {
        rt_san_side side = rt_san_side_here(mode, file, line, api);
        uint64_t lo = (uintptr_t)p - a->base;
        access_locked(a, lo, lo + n, mode, &side);
    }
    pthread_mutex_unlock(&rt_san_mu);
}

void aclsim_san_access(const void *p, uint64_t n, int mode, const char *file, int line)
{
    access_api(p, n, mode, file, line, "kernel");
}

void aclsim_san_copy(void *dst, const void *src, uint64_t n, const char *api, const char *file,
                     int line)
{
    if (!n)
        return;
    pthread_mutex_lock(&rt_san_mu);
    san_alloc *d = rt_san_find(dst), *s = rt_san_find(src);
    rt_san_side rs = rt_san_side_here(ACLSIM_SAN_R, file, line, api);
    rt_san_side ws = rt_san_side_here(ACLSIM_SAN_W, file, line, api);
    if (s) {
        uint64_t lo = (uintptr_t)src - s->base;
        access_locked(s, lo, lo + n, ACLSIM_SAN_R, &rs);
    }
    if (d) {
        uint64_t lo = (uintptr_t)dst - d->base;
        access_locked(d, lo, lo + n, ACLSIM_SAN_W, &ws);
    }
    pthread_mutex_unlock(&rt_san_mu);
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
