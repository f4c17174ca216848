/*
 * nb_scratch_pool.c - the device scratch pool every kernel stages its output through (see
 * nb_scratch_pool.h for the contract and the `scratch-pool` fault).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "aclsim_dtype.h"
#include "nb_scratch_pool.h"

#define POOL_MAX_BLOCKS 64
#define POOL_MAX_CACHED ((uint64_t)256 << 20) /* bytes kept in free blocks */
/* racecheck's name for a staging block (a registered buffer while it exists) */
#define STAGE_REGION "nnopbase.stage"

struct aclsim_stage {
    uint8_t *mem;
    uint64_t size;
    int32_t dtype; /* the key: dtype and element count of the output staged */
    int64_t count;
    int in_use;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static aclsim_stage *g_blocks[POOL_MAX_BLOCKS];
static int g_n;

/* Free cached blocks nobody uses until the free bytes fit POOL_MAX_CACHED (lock held). */
static void trim_locked(void)
{
    uint64_t cached = 0;
    for (int i = 0; i < g_n; i++)
        cached += g_blocks[i]->in_use ? 0 : g_blocks[i]->size;
    for (int i = 0; i < g_n && cached > POOL_MAX_CACHED;) {
        aclsim_stage *b = g_blocks[i];
        if (b->in_use) {
            i++;
            continue;
        }
        cached -= b->size;
        if (aclsim_sanitize_on)
            aclsim_san_region_drop(b->mem, STAGE_REGION);
        free(b->mem);
        free(b);
        g_blocks[i] = g_blocks[--g_n];
    }
}

static aclsim_stage *pool_acquire(int32_t dtype, int64_t count, uint64_t size)
{
    int sloppy = aclsim_fault("scratch-pool");
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < g_n; i++) {
        aclsim_stage *b = g_blocks[i];
        /* the fault: a cached block of the right type is taken even while a kernel uses it */
        if (b->dtype == dtype && b->count == count && (sloppy || !b->in_use)) {
            b->in_use = 1;
            if (aclsim_sanitize_on) /* ordered after the last holder's release (none: a race) */
                aclsim_san_handover(b, 0);
            pthread_mutex_unlock(&g_mu);
            return b;
        }
    }
    aclsim_stage *b = calloc(1, sizeof *b);
    if (b)
        b->mem = malloc(size);
    if (!b || !b->mem) {
        free(b);
        pthread_mutex_unlock(&g_mu);
        return NULL;
    }
    b->size = size;
    b->dtype = dtype;
    b->count = count;
    b->in_use = 1;
    if (g_n == POOL_MAX_BLOCKS)
        trim_locked();
    if (g_n < POOL_MAX_BLOCKS)
        g_blocks[g_n++] = b;
    else
        b->in_use = -1; /* pool full of busy blocks: a private block, freed on release */
    pthread_mutex_unlock(&g_mu);
    return b;
}

static void pool_release(aclsim_stage *b)
{
    pthread_mutex_lock(&g_mu);
    if (b->in_use == -1) {
        if (aclsim_sanitize_on)
            aclsim_san_region_drop(b->mem, STAGE_REGION);
        free(b->mem);
        free(b);
    } else {
        if (aclsim_sanitize_on) /* the hand-over to the next holder, under g_mu */
            aclsim_san_handover(b, 1);
        b->in_use = 0;
        trim_locked();
    }
    pthread_mutex_unlock(&g_mu);
}

uint8_t *aclsim_stage_begin(const aclsim_tensor_desc *out, aclsim_stage **st)
{
    int64_t n = aclsim_numel(out);
    uint64_t bytes = (uint64_t)(n > 0 ? n : 1) * (uint64_t)aclsim_dtype_size(out->dtype);
    *st = pool_acquire(out->dtype, n, bytes ? bytes : 1);
    if (*st && aclsim_sanitize_on) { /* the block is the kernel's to write from here */
        aclsim_san_region((*st)->mem, (*st)->size, STAGE_REGION);
        aclsim_san_access((*st)->mem, bytes, ACLSIM_SAN_W, __FILE__, __LINE__);
    }
    return *st ? (*st)->mem : NULL;
}

void aclsim_stage_commit(aclsim_stage *st, const aclsim_tensor_desc *out)
{
    if (!st)
        return;
    const int64_t es = aclsim_dtype_size(out->dtype);
    const int nd = out->ndim;
    int64_t total = aclsim_numel(out);
    uint8_t *dst = (uint8_t *)out->data + out->offset * es;
    int64_t idx[ACLSIM_MAX_DIMS] = {0}, off = 0;
    for (int64_t j = 0; j < total; j++) {
        memcpy(dst + off * es, st->mem + j * es, (size_t)es);
        for (int d = nd - 1; d >= 0; d--) {
            off += out->strides[d];
            if (++idx[d] < out->dims[d])
                break;
            off -= out->strides[d] * out->dims[d];
            idx[d] = 0;
        }
    }
    if (aclsim_sanitize_on) { /* the staged bytes read back, then the store into the output */
        aclsim_san_access(st->mem, (uint64_t)(total > 0 ? total : 1) * (uint64_t)es, ACLSIM_SAN_R,
                          __FILE__, __LINE__);
        aclsim_san_tensor(out, ACLSIM_SAN_W, __FILE__, __LINE__);
    }
    pool_release(st);
}

void aclsim_stage_abandon(aclsim_stage *st)
{
    if (st)
        pool_release(st);
}

