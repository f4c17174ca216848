/*
 * rt_sanitize_access.c - every access the sanitizer is told of (kernels' loads and stores,
 * copies, memsets), checked against the shadow entry it falls in (rt_sanitize.c's table):
 * initcheck reports reads of never-written bytes and marks written ones; racecheck reports two
 * accesses of one range, one a write, whose actors are not ordered (rt_sanitize_order.c), and a
 * call reading back a registered buffer another call wrote over its own write.  Also the side
 * of a finding: the call, stage and source line of the access.  Lock: rt_san_mu.
 */
#include <string.h>

#define ACLSIM_SAN_PRIVATE
#include "rt_private.h"
#include "sanitize.h"

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
