/*
 * op_mhc_tiling_ring.c - the `tiling-ring` fault of aclnnMhcPreSinkhornBackward: a two-slot
 * host-side tiling cache whose eviction does not know which entries are still in use.
 *
 * Mechanism.  Phase 1 looks its partition (blocks, tokens per block) up in a cache of two slots
 * keyed by the shape (M tokens, K = N*C).  On a hit it refreshes the slot's use stamp; on a miss
 * it overwrites the least recently used slot.  The executor keeps the slot's index, not a copy
 * (the cache "owns" the tiling), and phase 2 copies the slot into the launch, as CANN copies host
 * tiling data into a launch.  Nothing pins a slot between a call's phase 1 and its launch.
 *
 * Depth 3.  With at most two calls between phase 1 and launch, the victim's slot is never the
 * least recently used when the other call misses (its own phase 1 is more recent than the slot it
 * replaced): every ordering of two calls, serial replay, and the interleaved pair matrix
 * (A.phase1, B.phase1, A.phase2, B.phase2) launch with their own partition.  It takes three
 * calls of distinct shapes: A's phase 1, then B's and C's phase 1 before A's launch, so that C
 * evicts A's slot (A's stamp is the oldest) and A launches with C's partition.  The kernel then
 * behaves as under `tiling-race` (op_mhc_pre_sinkhorn_backward.c): its own grid and token count
 * bound it, the last block takes the remaining tokens, but another shape's tokens per block
 * regroups the tokens (other rounding) or drops blocks from the reduction.
 */
#include <pthread.h>
#include <stdint.h>

#include "mhc_common.h"
#include "mhc_tiling_ring.h"

typedef struct {
    pthread_mutex_t mu;
    struct {
        int64_t M, K;       /* the key: shape (0, 0 = empty) */
        int64_t tpb, blocks; /* the partition                */
        uint64_t used;      /* use stamp                      */
    } slot[MHC_RING_SLOTS];
    uint64_t clock;
} ring_state;

static void ring_init(void *state)
{
    ring_state *g = state;
    pthread_mutex_init(&g->mu, NULL);
}

static ring_state *ring(void)
{
    return aclsim_shared_state("mhc_bwd.tiling_ring", sizeof(ring_state), ring_init);
}

int mhc_ring_put(const mhc_tiling *t)
{
    ring_state *g = ring();
    if (!g)
        return -1; /* out of memory: the caller keeps its own tiling */
    pthread_mutex_lock(&g->mu);
    int at = -1, lru = 0;
    for (int i = 0; i < MHC_RING_SLOTS; i++) {
        if (g->slot[i].M == t->M && g->slot[i].K == t->K && g->slot[i].used)
            at = i;
        if (g->slot[i].used < g->slot[lru].used)
            lru = i;
    }
    if (at < 0) { /* miss: evict the least recently used slot, in use or not (the bug) */
        at = lru;
        g->slot[at].M = t->M;
        g->slot[at].K = t->K;
        g->slot[at].tpb = t->tokens_per_block;
        g->slot[at].blocks = t->blocks;
    }
    g->slot[at].used = ++g->clock;
    pthread_mutex_unlock(&g->mu);
    return at;
}

void mhc_ring_launch_args(int slot, int64_t *args)
{
    ring_state *g = ring();
    if (!g || slot < 0 || slot >= MHC_RING_SLOTS)
        return;
    pthread_mutex_lock(&g->mu);
    args[0] = g->slot[slot].tpb;
    args[1] = g->slot[slot].blocks;
    pthread_mutex_unlock(&g->mu);
}
