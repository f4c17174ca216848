/*
 * rt_sanitize_report.c - sanitizer findings: msSanitizer-style blocks on stderr and, with
 * ACLSIM_SANITIZE_LOG=FILE, one JSON object a line (docs/sanitizer.md has both formats).
 *
 * A finding repeated with the same tool, kind, allocation, offset, size and calls (for races:
 * the same two calls and source lines, whatever the bytes) is reported once (a loop that
 * reads the same never-written bytes would otherwise flood the log).  Callers hold rt_san_mu.
 */
#include <stdio.h>
#include <string.h>

#define ACLSIM_SAN_PRIVATE
#include "rt_private.h"
#include "sanitize.h"

#define SEEN_CAP 8192

static FILE *g_log;
static uint64_t g_seen[SEEN_CAP];
static int g_n_seen;
static uint64_t g_count;

int rt_san_report_open(const char *log, char *err, size_t cap)
{
    g_n_seen = 0;
    g_count = 0;
    if (!log || !*log)
        return 0;
    g_log = fopen(log, "a");
    if (!g_log) {
        snprintf(err, cap, "ACLSIM_SANITIZE_LOG: cannot open '%s' for appending", log);
        return -1;
    }
    return 0;
}

void rt_san_report_close(void)
{
    if (g_count || aclsim_sanitize_on)
        fprintf(stderr, "====== SUMMARY: aclsim sanitizer: %llu finding(s)\n",
                (unsigned long long)g_count);
    if (g_log)
        fclose(g_log);
    g_log = NULL;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = mix(h, (unsigned char)*s);
    return h;
}

/* 1 if an identical finding was reported already (else remembers it). */
static int seen(const rt_san_finding *f)
{
    uint64_t h = hash_str(hash_str(1469598103934665603ull, f->tool), f->kind);
    h = mix(h, f->alloc_id);
    if (strcmp(f->tool, "racecheck") != 0) /* a race: once per pair of calls and lines */
        h = mix(mix(h, f->offset), f->bytes);
    for (int i = 0; i < f->n_sides; i++)
        h = hash_str(mix(mix(h, f->sides[i].call), (uint64_t)f->sides[i].line),
                     f->sides[i].stage);
    for (int i = 0; i < g_n_seen; i++)
        if (g_seen[i] == h)
            return 1;
    if (g_n_seen < SEEN_CAP)
        g_seen[g_n_seen++] = h;
    return 0;
}

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path ? path : "?";
}

static void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(o, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(o, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, o);
    }
    fputc('"', o);
}

static void side_words(const rt_san_side *s, char *buf, size_t cap)
{
    if (s->call)
        snprintf(buf, cap, "%s#%llu (%s)", s->op ? s->op : "?", (unsigned long long)s->call,
                 s->stage ? s->stage : "?");
    else
        snprintf(buf, cap, "%s (%s)", s->op ? s->op : "host", s->stage ? s->stage : "runtime");
}

static void write_stderr(const rt_san_finding *f)
{
    const char *level = strcmp(f->tool, "racecheck") == 0 ? "Potential " : "";
    if (strcmp(f->tool, "racecheck") == 0)
        fprintf(stderr, "====== ERROR: %s%s hazard detected at GM in %s:\n", level, f->kind,
                f->sides[0].op ? f->sides[0].op : "?");
    else
        fprintf(stderr, "====== ERROR: %s of size %llu\n", f->kind, (unsigned long long)f->bytes);
    if (f->alloc_id)
        fprintf(stderr, "======    at %p on GM (%s allocation #%llu + %llu, %llu bytes)%s%s%s\n",
                f->address, f->alloc_kind, (unsigned long long)f->alloc_id,
                (unsigned long long)f->offset, (unsigned long long)f->alloc_size,
                f->tensor && *f->tensor ? "; output " : "", f->tensor ? f->tensor : "",
                f->owner_op ? "" : "");
    else if (f->address)
        fprintf(stderr, "======    at %p on GM\n", f->address);
    if (f->owner_call)
        fprintf(stderr, "======    owned by %s#%llu\n", f->owner_op ? f->owner_op : "?",
                (unsigned long long)f->owner_call);
    for (int i = 0; i < f->n_sides; i++) {
        char who[160];
        side_words(&f->sides[i], who, sizeof who);
        const rt_san_side *s = &f->sides[i];
        fprintf(stderr, "======    %s %s at +%llu in %s by %s in %s:%d\n",
                s->actor ? "stream" : "host", s->access ? s->access : "access",
                (unsigned long long)f->offset, s->actor ? "device" : "host", who,
                base_name(s->file), s->line);
    }
    if (f->note && *f->note)
        fprintf(stderr, "======    %s\n", f->note);
}

static void write_json(const rt_san_finding *f)
{
    FILE *o = g_log;
    fprintf(o, "{\"tool\": ");
    json_str(o, f->tool);
    fprintf(o, ", \"kind\": ");
    json_str(o, f->kind);
    fprintf(o, ", \"bytes\": %llu, \"alloc\": %llu, \"alloc_kind\": ", (unsigned long long)f->bytes,
            (unsigned long long)f->alloc_id);
    json_str(o, f->alloc_kind ? f->alloc_kind : "");
    fprintf(o, ", \"alloc_size\": %llu, \"offset\": %llu, \"address\": \"%p\", \"tensor\": ",
            (unsigned long long)f->alloc_size, (unsigned long long)f->offset, f->address);
    json_str(o, f->tensor ? f->tensor : "");
    fprintf(o, ", \"owner\": ");
    if (f->owner_call) {
        fprintf(o, "{\"call\": %llu, \"op\": ", (unsigned long long)f->owner_call);
        json_str(o, f->owner_op);
        fputc('}', o);
    } else {
        fprintf(o, "null");
    }
    fprintf(o, ", \"calls\": [");
    for (int i = 0; i < f->n_sides; i++) {
        const rt_san_side *s = &f->sides[i];
        fprintf(o, "%s{\"call\": %llu, \"op\": ", i ? ", " : "", (unsigned long long)s->call);
        json_str(o, s->op ? s->op : "");
        fprintf(o, ", \"stage\": ");
        json_str(o, s->stage ? s->stage : "");
        fprintf(o, ", \"access\": ");
        json_str(o, s->access ? s->access : "");
        fprintf(o, ", \"stream\": %d, \"file\": ", s->actor);
        json_str(o, base_name(s->file));
        fprintf(o, ", \"line\": %d}", s->line);
    }
    fprintf(o, "], \"stages\": [");
    for (int i = 0; i < f->n_sides; i++) {
        fprintf(o, "%s", i ? ", " : "");
        json_str(o, f->sides[i].stage ? f->sides[i].stage : "");
    }
    fprintf(o, "], \"note\": ");
    json_str(o, f->note ? f->note : "");
    fprintf(o, "}\n");
    fflush(o);
}

void rt_san_report(const rt_san_finding *f)
{
    if (seen(f))
        return;
    g_count++;
    write_stderr(f);
    if (g_log)
        write_json(f);
}
