/*
 * TCG plugin for QEMU 7.2 behind `customop run --on qemu --profile DIR`:
 * per vCPU (core), executed instructions per address, loads and stores per
 * address by memory class, and the emulated DMA engine's descriptors and
 * bytes by direction. Built by the tool itself (gcc -shared -fPIC); QEMU
 * 7.2 ships no qemu-plugin.h, so the few API functions used are declared
 * here with the 7.2 signatures.
 *
 * Arguments (at least one of out=, marks=, check=):
 *   out=FILE        where the counts go, written at exit
 *   classes=FILE    lines "CLASS lo hi": memory classes of data addresses
 *                   (t tcm, h hbm, s sbuf, k stack, i image, r registers)
 *                   and "x lo hi" code not counted (the software DMA
 *                   engine, hardware on the Q7), "c lo hi" the engine's
 *                   copy (its stores are the DMA bytes) and "e lo hi"
 *                   the copy's entry (one per descriptor); for marks=,
 *                   "L lo hi" library code and "I lo hi" code counted as
 *                   its caller's (compiler_builtins, the window vectors);
 *                   for out=, "K lo hi" the kernel's own code (DMA bytes
 *                   and the library's instructions go to the last of its
 *                   instructions that ran).
 *   mark=ADDR       the marker function's first instruction
 *   marks=FILE      the running counts at each marker, written at exit
 *                   (`cargo xtask perf` reads its budgets from these)
 *   region=K        with marks=: per address, the instructions executed
 *                   between the run's markers 2K and 2K+1
 *   watch=ADDR      with region=: the calls into ADDR per calling
 *                   instruction in that region (repeatable)
 *
 * Instructions are counted per translation block: one exec callback per
 * block executed (it knows the vCPU, which 7.2's inline counters do not),
 * adding 1 to the block's per-vCPU count; an instruction's count is the
 * sum of the counts of the blocks holding it. Memory accesses need the
 * address, so each load/store instruction has a memory callback.
 *
 * Output lines: "I vcpu addr n" (instructions), "M vcpu addr class loads
 * stores", "D vcpu class descriptors bytes" (DMA, by destination class),
 * "B vcpu addr descriptors bytes" (DMA by the kernel's instruction that led
 * to it: the last one of class K the vCPU ran before the descriptor; addr
 * 0 before any) and "S vcpu site addr n" (instructions outside class K by
 * the kernel's instruction that led to them, as for "B": the last one of
 * class K the vCPU ran, forgotten when a block of class K ends in a
 * return, so the code the op returns into has none and is not listed).
 *
 * Lines of marks=FILE: "K vcpu total lib" per execution of the marker, in
 * the order they ran: the instructions that vCPU executed before the
 * marker's first instruction (so a region between two markers counts the
 * first marker's body and the second's call; the empty region's count
 * takes both out), and of them the library's: an instruction of class L,
 * or of class I when the last instruction outside class I was of class L
 * (memcpy called by the runtime is the library's, a soft-float compare
 * called by the kernel the kernel's). Exact although counted per block:
 * the marker knows its place in its block and the counts at the block's
 * start (tests/exact_count.rs checks them against QEMU's own log of every
 * instruction). With region=: lines "P addr n" (n may be negative, sum them per
 * address) and "W from to n" (watch=).
 *
 * The same instrument checks the run (profile_check.h, included below; arguments
 * check=FILE for the findings and tensors=FILE for where the host placed
 * the inputs and the output): a shadow of the device's memory fed by the
 * runtime's trace port. Either out= or check= (or both) must be given.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb, enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb, enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb, enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw, void *userdata);
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);

/* The plugin API this build declares (`-DPLUGIN_API=N`, chosen by the tool
 * from the QEMU it runs): QEMU before 9.0 speaks version 1; 9.0 and later
 * refuse it and speak 2 and up, where an instruction's bytes are copied
 * out instead of lent. Everything else this plugin uses is the same. */
#ifndef PLUGIN_API
#define PLUGIN_API 1
#endif
#if PLUGIN_API >= 2
size_t qemu_plugin_insn_data(const struct qemu_plugin_insn *insn, void *dest, size_t len);
#else
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
#endif

/* Up to `len` bytes of `insn` into `dest`; how many. */
static size_t insn_bytes(const struct qemu_plugin_insn *insn, uint8_t *dest, size_t len)
{
    size_t n = qemu_plugin_insn_size(insn);
    if (n > len)
        n = len;
#if PLUGIN_API >= 2
    return qemu_plugin_insn_data(insn, dest, n);
#else
    const void *b = qemu_plugin_insn_data(insn);
    if (!b)
        return 0;
    memcpy(dest, b, n);
    return n;
#endif
}

__attribute__((visibility("default"))) int qemu_plugin_version = PLUGIN_API;

#define MAX_VCPUS 8
#define MAX_RANGES 256
/* Memory classes, in the order of the output's class numbers. */
enum { C_OTHER, C_TCM, C_HBM, C_SBUF, C_STACK, C_IMAGE, C_REGS, N_CLASSES };
static const char class_letters[N_CLASSES] = { 'o', 't', 'h', 's', 'k', 'i', 'r' };

static struct range { uint64_t lo, hi; int cls; } data_ranges[MAX_RANGES], skip_ranges[MAX_RANGES];
static size_t n_data, n_skip;
static uint64_t copy_lo, copy_hi, copy_entry_lo, copy_entry_hi;
static char *out_path;

/* Every record is kept on one list, never freed: QEMU holds pointers. */
struct tb_rec {
    struct tb_rec *next;
    size_t n;
    uint64_t count[MAX_VCPUS];
    /* marks=: the library's instructions of one execution: `fixed`, plus
     * `lead` (the class-I instructions before the block's first of
     * another class) when the vCPU was in library code; `ends` the code
     * class the block leaves the vCPU in (CODE_NONE: unchanged). */
    uint64_t fixed, lead;
    int ends;
    uint64_t base; /* region=: count[] of the region's vCPU at its start */
    uint64_t last_pc; /* watch=: the block's last instruction */
    uint64_t own_pc; /* its last instruction of class K, or 0 */
    bool own_returns; /* with own_pc: the block ends in a return */
    /* out=, a block without class K: its executions per vCPU by the
     * kernel's instruction that led to them (own_pc[]); each list is only
     * touched by its vCPU's thread. */
    struct caller { struct caller *next; uint64_t pc, n; } *callers[MAX_VCPUS];
    uint64_t addr[];
};
struct mem_rec {
    struct mem_rec *next;
    uint64_t addr;
    uint64_t ld[MAX_VCPUS][N_CLASSES], st[MAX_VCPUS][N_CLASSES];
};
static struct tb_rec *tbs;
static struct mem_rec *mems;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* DMA: per vCPU, descriptors and bytes by the class of the stores'
 * destination; a descriptor's class is that of its first store. */
static uint64_t dma_desc[MAX_VCPUS][N_CLASSES], dma_bytes[MAX_VCPUS][N_CLASSES];
static bool dma_pending[MAX_VCPUS];
/* DMA by the kernel instruction that led to it (class K lines). */
static struct dma_site { struct dma_site *next; unsigned vcpu; uint64_t pc, descriptors, bytes; } *dma_sites, *dma_cur[MAX_VCPUS];
static uint64_t own_pc[MAX_VCPUS];

/* ---- marks= (what `cargo xtask perf` counts) ---- */
/* CODE_OWN: the kernel's own code (K lines), CODE_KERNEL for the rest. */
enum { CODE_KERNEL, CODE_LIB, CODE_INHERIT, CODE_NONE, CODE_OWN };
static struct range *code_ranges; /* sorted by lo, disjoint */
static size_t n_code, cap_code;
static uint64_t mark_addr;
static char *marks_path;
static long region = -1;
#define MAX_WATCH 32
static uint64_t watch[MAX_WATCH];
static int n_watch;
/* Per vCPU: the running counts, and their values at the start of the
 * block being executed (a marker inside it adds its own prefix). */
static struct vstate {
    uint64_t total, lib, tb_total, tb_lib;
    int last, tb_last;
    struct tb_rec *cur, *prev;
} vs[MAX_VCPUS];
/* A marker's (or watched instruction's) place in its block: the block,
 * the counted instructions before it there and their library share. */
struct site {
    struct tb_rec *r;
    size_t idx;
    uint64_t fixed, lead;
    uint64_t prev_pc; /* the instruction before it in the block, or 0 */
};
static struct mark_line { unsigned vcpu; uint64_t total, lib; } *marks;
static size_t n_marks, cap_marks;
static uint64_t marks_seen;
static struct tb_rec *region_start, *region_end;
static size_t region_start_idx, region_end_idx;
static bool in_region;
static unsigned region_vcpu;
static struct edge { uint64_t from, to, n; } *edges;
static size_t n_edges, cap_edges;

static int code_class(uint64_t a)
{
    size_t lo = 0, hi = n_code;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (code_ranges[mid].hi <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n_code && code_ranges[lo].lo <= a && a < code_ranges[lo].hi)
        return code_ranges[lo].cls;
    return CODE_KERNEL;
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return p;
    *cap = *cap ? 2 * *cap : 256;
    p = realloc(p, *cap * size);
    if (!p)
        abort();
    return p;
}

static void on_mark(unsigned int vcpu, void *u)
{
    const struct site *s = u;
    struct vstate *v = &vs[vcpu % MAX_VCPUS];
    uint64_t total = v->tb_total + s->idx, lib = v->tb_lib + s->fixed + (v->tb_last == CODE_LIB ? s->lead : 0);
    pthread_mutex_lock(&lock);
    marks = grow(marks, &cap_marks, n_marks, sizeof *marks);
    marks[n_marks++] = (struct mark_line){ vcpu, total, lib };
    if (region >= 0 && marks_seen == (uint64_t)(2 * region)) {
        /* The block's counts so far include the marker's block whole:
         * the region starts at the marker's instruction. */
        for (struct tb_rec *r = tbs; r; r = r->next)
            r->base = r->count[vcpu % MAX_VCPUS];
        region_start = s->r;
        region_start_idx = s->idx;
        region_vcpu = vcpu;
        in_region = true;
    } else if (region >= 0 && marks_seen == (uint64_t)(2 * region + 1)) {
        for (struct tb_rec *r = tbs; r; r = r->next)
            r->base = r->count[vcpu % MAX_VCPUS] - r->base;
        region_end = s->r;
        region_end_idx = s->idx;
        in_region = false;
    }
    marks_seen++;
    pthread_mutex_unlock(&lock);
}

static void on_watch(unsigned int vcpu, void *u)
{
    const struct site *s = u;
    struct vstate *v = &vs[vcpu % MAX_VCPUS];
    /* The calling instruction: the one before it in its block, else the
     * last of the block before (a call ends its block). */
    uint64_t from = s->prev_pc ? s->prev_pc : v->prev ? v->prev->last_pc : 0;
    size_t i;
    if (!in_region || vcpu != region_vcpu)
        return;
    pthread_mutex_lock(&lock);
    for (i = 0; i < n_edges; i++)
        if (edges[i].from == from && edges[i].to == s->r->addr[s->idx])
            break;
    if (i == n_edges) {
        edges = grow(edges, &cap_edges, n_edges, sizeof *edges);
        edges[n_edges++] = (struct edge){ from, s->r->addr[s->idx], 0 };
    }
    edges[i].n++;
    pthread_mutex_unlock(&lock);
}

static void write_marks(void)
{
    FILE *f = fopen(marks_path, "w");
    if (!f) {
        fprintf(stderr, "customop profile plugin: cannot write %s\n", marks_path);
        return;
    }
    for (size_t i = 0; i < n_marks; i++)
        fprintf(f, "K %u %llu %llu\n", marks[i].vcpu, (unsigned long long)marks[i].total, (unsigned long long)marks[i].lib);
    if (region >= 0 && region_end) {
        for (struct tb_rec *r = tbs; r; r = r->next)
            if (r->base)
                for (size_t i = 0; i < r->n; i++)
                    fprintf(f, "P %llx %llu\n", (unsigned long long)r->addr[i], (unsigned long long)r->base);
        /* The marker blocks were counted whole at their start: the start
         * block's instructions from the marker on ran in the region, the
         * end block's did not. */
        for (size_t i = region_start_idx; i < region_start->n; i++)
            fprintf(f, "P %llx 1\n", (unsigned long long)region_start->addr[i]);
        for (size_t i = region_end_idx; i < region_end->n; i++)
            fprintf(f, "P %llx -1\n", (unsigned long long)region_end->addr[i]);
        for (size_t i = 0; i < n_edges; i++)
            fprintf(f, "W %llx %llx %llu\n", (unsigned long long)edges[i].from, (unsigned long long)edges[i].to, (unsigned long long)edges[i].n);
    }
    fputs("end\n", f);
    fclose(f);
}

static int data_class(uint64_t a)
{
    for (size_t i = 0; i < n_data; i++)
        if (a >= data_ranges[i].lo && a < data_ranges[i].hi)
            return data_ranges[i].cls;
    return C_OTHER;
}

static bool in_skip(uint64_t a)
{
    for (size_t i = 0; i < n_skip; i++)
        if (a >= skip_ranges[i].lo && a < skip_ranges[i].hi)
            return true;
    return false;
}

static void on_tb_exec(unsigned int vcpu, void *u)
{
    struct tb_rec *r = u;
    struct vstate *v = &vs[vcpu % MAX_VCPUS];
    r->count[vcpu % MAX_VCPUS]++;
    v->tb_total = v->total;
    v->tb_lib = v->lib;
    v->tb_last = v->last;
    v->total += r->n;
    v->lib += r->fixed + (v->last == CODE_LIB ? r->lead : 0);
    if (r->ends != CODE_NONE)
        v->last = r->ends;
    v->prev = v->cur;
    v->cur = r;
    if (r->own_pc) {
        own_pc[vcpu % MAX_VCPUS] = r->own_returns ? 0 : r->own_pc;
    } else if (out_path && own_pc[vcpu % MAX_VCPUS]) {
        uint64_t pc = own_pc[vcpu % MAX_VCPUS];
        struct caller *c = r->callers[vcpu % MAX_VCPUS];
        while (c && c->pc != pc)
            c = c->next;
        if (!c) {
            c = calloc(1, sizeof *c);
            if (!c)
                abort();
            *c = (struct caller){ r->callers[vcpu % MAX_VCPUS], pc, 0 };
            r->callers[vcpu % MAX_VCPUS] = c;
        }
        c->n++;
    }
}

/* Whether `insn` is a return: RET, RETW (3 bytes) or their narrow forms
 * RET.N, RETW.N (2 bytes), little-endian. */
static bool is_return(const struct qemu_plugin_insn *insn)
{
    uint8_t b[3] = { 0 };
    size_t n = insn_bytes(insn, b, sizeof b);
    if (n == 2)
        return (b[0] == 0x0d || b[0] == 0x1d) && b[1] == 0xf0;
    return n == 3 && (b[0] == 0x80 || b[0] == 0x90) && b[1] == 0 && b[2] == 0;
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *u)
{
    struct mem_rec *m = u;
    int c = data_class(vaddr);
    if (qemu_plugin_mem_is_store(info))
        m->st[vcpu % MAX_VCPUS][c]++;
    else
        m->ld[vcpu % MAX_VCPUS][c]++;
}

static void on_copy_entry(unsigned int vcpu, void *u)
{
    unsigned v = vcpu % MAX_VCPUS;
    struct dma_site *d;
    (void)u;
    dma_pending[v] = true;
    pthread_mutex_lock(&lock);
    for (d = dma_sites; d && !(d->vcpu == vcpu && d->pc == own_pc[v]); d = d->next)
        ;
    if (!d) {
        d = calloc(1, sizeof *d);
        if (!d)
            abort();
        *d = (struct dma_site){ dma_sites, vcpu, own_pc[v], 0, 0 };
        dma_sites = d;
    }
    d->descriptors++;
    dma_cur[v] = d;
    pthread_mutex_unlock(&lock);
}

static void on_copy_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *u)
{
    unsigned v = vcpu % MAX_VCPUS;
    int c;
    (void)u;
    if (!qemu_plugin_mem_is_store(info))
        return;
    c = data_class(vaddr);
    if (dma_pending[v]) {
        dma_desc[v][c]++;
        dma_pending[v] = false;
    }
    dma_bytes[v][c] += 1u << qemu_plugin_mem_size_shift(info);
    if (dma_cur[v])
        dma_cur[v]->bytes += 1u << qemu_plugin_mem_size_shift(info);
}


#include "profile_check.h"

static struct site *new_site(struct tb_rec *r, size_t idx, uint64_t fixed, uint64_t lead, uint64_t prev_pc)
{
    struct site *site = malloc(sizeof *site);
    if (!site)
        abort();
    *site = (struct site){ r, idx, fixed, lead, prev_pc };
    return site;
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb), counted = 0;
    struct tb_rec *r;
    /* The library share of the block's prefix (see struct tb_rec). */
    uint64_t fixed = 0, lead = 0, prev_pc = 0;
    int state = CODE_NONE;
    (void)id;
    pthread_mutex_lock(&lock);
    r = calloc(1, sizeof *r + n * sizeof r->addr[0]);
    if (!r)
        abort();
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t a = qemu_plugin_insn_vaddr(insn);
        if (check_path)
            check_insn(insn);
        if (!out_path && !marks_path)
            continue;
        r->last_pc = a;
        if (marks_path && a == mark_addr)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS, new_site(r, counted, fixed, lead, prev_pc));
        for (int w = 0; w < n_watch && region >= 0; w++)
            if (watch[w] == a && !in_skip(a))
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_watch, QEMU_PLUGIN_CB_NO_REGS, new_site(r, counted, 0, 0, prev_pc));
        prev_pc = a;
        if (out_path && a >= copy_lo && a < copy_hi)
            qemu_plugin_register_vcpu_mem_cb(insn, on_copy_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W, NULL);
        if (out_path && a >= copy_entry_lo && a < copy_entry_hi)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_copy_entry, QEMU_PLUGIN_CB_NO_REGS, NULL);
        if (in_skip(a))
            continue;
        if (n_code) {
            int c = code_class(a);
            if (c == CODE_OWN) {
                r->own_pc = a;
                r->own_returns = out_path && i + 1 == n && is_return(insn);
                c = CODE_KERNEL;
            }
            if (c != CODE_INHERIT)
                state = c;
            if (state == CODE_NONE)
                lead++;
            else if (state == CODE_LIB)
                fixed++;
        }
        r->addr[counted++] = a;
        if (!out_path)
            continue;
        struct mem_rec *m = calloc(1, sizeof *m);
        if (!m)
            abort();
        m->addr = a;
        m->next = mems;
        mems = m;
        qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, m);
    }
    r->n = counted;
    r->fixed = fixed;
    r->lead = lead;
    r->ends = state;
    r->next = tbs;
    tbs = r;
    /* With marks=, every block: a watched call's caller is the block
     * before, counted or not. */
    if (counted || (marks_path && n_watch))
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec, QEMU_PLUGIN_CB_NO_REGS, r);
    pthread_mutex_unlock(&lock);
}

static void on_exit_write(qemu_plugin_id_t id, void *u)
{
    FILE *f;
    (void)id;
    (void)u;
    if (check_path)
        write_findings();
    if (marks_path)
        write_marks();
    if (!out_path)
        return;
    f = fopen(out_path, "w");
    if (!f) {
        fprintf(stderr, "customop profile plugin: cannot write %s\n", out_path);
        return;
    }
    for (struct tb_rec *r = tbs; r; r = r->next)
        for (unsigned v = 0; v < MAX_VCPUS; v++)
            if (r->count[v])
                for (size_t i = 0; i < r->n; i++)
                    fprintf(f, "I %u %llx %llu\n", v, (unsigned long long)r->addr[i], (unsigned long long)r->count[v]);
    for (struct mem_rec *m = mems; m; m = m->next)
        for (unsigned v = 0; v < MAX_VCPUS; v++)
            for (int c = 0; c < N_CLASSES; c++)
                if (m->ld[v][c] || m->st[v][c])
                    fprintf(f, "M %u %llx %c %llu %llu\n", v, (unsigned long long)m->addr, class_letters[c], (unsigned long long)m->ld[v][c],
                            (unsigned long long)m->st[v][c]);
    for (unsigned v = 0; v < MAX_VCPUS; v++)
        for (int c = 0; c < N_CLASSES; c++)
            if (dma_desc[v][c] || dma_bytes[v][c])
                fprintf(f, "D %u %c %llu %llu\n", v, class_letters[c], (unsigned long long)dma_desc[v][c], (unsigned long long)dma_bytes[v][c]);
    for (struct dma_site *d = dma_sites; d; d = d->next)
        fprintf(f, "B %u %llx %llu %llu\n", d->vcpu, (unsigned long long)d->pc, (unsigned long long)d->descriptors, (unsigned long long)d->bytes);
    for (struct tb_rec *r = tbs; r; r = r->next)
        for (unsigned v = 0; v < MAX_VCPUS; v++)
            for (struct caller *c = r->callers[v]; c; c = c->next)
                for (size_t i = 0; i < r->n; i++)
                    fprintf(f, "S %u %llx %llx %llu\n", v, (unsigned long long)c->pc, (unsigned long long)r->addr[i], (unsigned long long)c->n);
    fputs("end\n", f);
    fclose(f);
}

static int class_of_letter(char k)
{
    for (int c = 0; c < N_CLASSES; c++)
        if (class_letters[c] == k)
            return c;
    return -1;
}

static int cmp_range(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int load_classes(const char *path)
{
    FILE *f = fopen(path, "r");
    char k;
    unsigned long long lo, hi;
    if (!f) {
        fprintf(stderr, "customop profile plugin: cannot open %s\n", path);
        return -1;
    }
    while (fscanf(f, " %c %llx %llx", &k, &lo, &hi) == 3) {
        if (k == 'x' && n_skip < MAX_RANGES) {
            skip_ranges[n_skip++] = (struct range){ lo, hi, 0 };
        } else if (k == 'c') {
            copy_lo = lo;
            copy_hi = hi;
        } else if (k == 'e') {
            copy_entry_lo = lo;
            copy_entry_hi = hi;
        } else if (k == 'L' || k == 'I' || k == 'K') {
            code_ranges = grow(code_ranges, &cap_code, n_code, sizeof *code_ranges);
            code_ranges[n_code++] = (struct range){ lo, hi, k == 'L' ? CODE_LIB : k == 'K' ? CODE_OWN : CODE_INHERIT };
        } else if (class_of_letter(k) > 0 && n_data < MAX_RANGES) {
            data_ranges[n_data++] = (struct range){ lo, hi, class_of_letter(k) };
        } else {
            fprintf(stderr, "customop profile plugin: %s: bad line `%c %llx %llx`\n", path, k, lo, hi);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    qsort(code_ranges, n_code, sizeof *code_ranges, cmp_range);
    return 0;
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            out_path = strdup(argv[i] + 4);
        } else if (strncmp(argv[i], "check=", 6) == 0) {
            check_path = strdup(argv[i] + 6);
            if (!shadow && check_init() != 0)
                return -1;
        } else if (strncmp(argv[i], "tensors=", 8) == 0) {
            if (!shadow && check_init() != 0)
                return -1;
            if (load_tensors(argv[i] + 8) != 0)
                return -1;
        } else if (strncmp(argv[i], "classes=", 8) == 0) {
            if (load_classes(argv[i] + 8) != 0)
                return -1;
        } else if (strncmp(argv[i], "mark=", 5) == 0) {
            mark_addr = strtoull(argv[i] + 5, NULL, 0);
        } else if (strncmp(argv[i], "marks=", 6) == 0) {
            marks_path = strdup(argv[i] + 6);
        } else if (strncmp(argv[i], "region=", 7) == 0) {
            region = strtol(argv[i] + 7, NULL, 0);
        } else if (strncmp(argv[i], "watch=", 6) == 0 && n_watch < MAX_WATCH) {
            watch[n_watch++] = strtoull(argv[i] + 6, NULL, 0);
        } else {
            fprintf(stderr, "customop profile plugin: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    if (!out_path && !check_path && !marks_path) {
        fprintf(stderr, "customop profile plugin: out=FILE, marks=FILE or check=FILE is required\n");
        return -1;
    }
    if (marks_path && !mark_addr) {
        fprintf(stderr, "customop profile plugin: marks=FILE needs mark=ADDR\n");
        return -1;
    }
    for (int v = 0; v < MAX_VCPUS; v++)
        vs[v].last = vs[v].tb_last = CODE_KERNEL;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
    qemu_plugin_register_atexit_cb(id, on_exit_write, NULL);
    return 0;
}
