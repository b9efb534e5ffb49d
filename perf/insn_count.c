/*
 * TCG plugin for QEMU 7.2 (which ships no qemu-plugin.h): counts executed
 * guest instructions exactly and prints the running count every time the
 * instruction at `mark=ADDR` executes (the image's `perf_mark` function).
 * Instructions whose address lies in a `skip=LO-HI` range are not counted
 * (the software DMA engine of the QEMU HAL, which is hardware on the Q7).
 *
 * Build: gcc -shared -fPIC -O2 -o libinsn_count.so insn_count.c
 * Run:   qemu-system-xtensa ... -plugin ./libinsn_count.so,mark=0x6000...,
 *        skip=0x...-0x... -d plugin -D counts.log
 * Output: one line "mark N" per execution of the marked instruction.
 *
 * With `classes=FILE` (lines "L lo hi": library code, "I lo hi": code that
 * counts as its caller's, e.g. compiler_builtins and the window vectors;
 * the rest is the kernel's) the count is per vCPU and split: every
 * instruction is counted by an exec callback into its vCPU's total and,
 * when it is library code (or inherits from library code), its library
 * count. Marks then print "mark VCPU TOTAL LIB". Exact on any number of
 * vCPUs (each vCPU only touches its own counters).
 *
 * Only the API functions used are declared, with the 7.2 signatures.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn, enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb, enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_outs(const char *string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_SKIP 16
static uint64_t mark_addr;
static uint64_t skip_lo[MAX_SKIP], skip_hi[MAX_SKIP];
static int n_skip;
static uint64_t count; /* one vCPU: the measurements run on `-M sim` */

/* Optional profile (`prof=K`): per-instruction counts between marks 2K and
 * 2K+1 (region K), printed as "prof ADDR N" lines at mark 2K+1. */
struct site { uint64_t addr, n, base; bool watched; };
/* With `watch=ADDR` (a function's first instruction, repeatable): the
 * calls into it, per calling instruction, printed as "call FROM TO N". */
#define MAX_WATCH 32
#define MAX_EDGES 4096
static uint64_t watch[MAX_WATCH];
static int n_watch;
static struct site *last_site;
static struct edge { uint64_t from, to, n; } edges[MAX_EDGES];
static size_t n_edges;
static bool in_region;
static struct site *sites;
static size_t n_sites, cap_sites;
static long prof_region = -1;
static uint64_t n_marks;

/* Class mode (`classes=FILE`). */
#define MAX_VCPUS 32
#define MAX_CLASS_RANGES 8192
enum insn_class { CLASS_KERNEL = 0, CLASS_LIB = 1, CLASS_INHERIT = 2 };
static struct { uint64_t lo, hi; int cls; } class_ranges[MAX_CLASS_RANGES];
static size_t n_class_ranges;
static bool class_mode;
static struct vcpu_count { uint64_t total, lib; int last; } vcpus[MAX_VCPUS];
/* One static cell per class: the exec callback's userdata. */
static const int class_cell[3] = { CLASS_KERNEL, CLASS_LIB, CLASS_INHERIT };

static bool skipped(uint64_t a)
{
    for (int i = 0; i < n_skip; i++)
        if (a >= skip_lo[i] && a < skip_hi[i])
            return true;
    return false;
}

static int class_of(uint64_t a)
{
    /* Ranges are sorted by lo and disjoint: binary search. */
    size_t lo = 0, hi = n_class_ranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (class_ranges[mid].hi <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n_class_ranges && class_ranges[lo].lo <= a && a < class_ranges[lo].hi)
        return class_ranges[lo].cls;
    return CLASS_KERNEL;
}

static void on_class_exec(unsigned int vcpu, void *u)
{
    int c = *(const int *)u;
    struct vcpu_count *v = &vcpus[vcpu % MAX_VCPUS];
    if (c != CLASS_INHERIT)
        v->last = c;
    v->total++;
    if (v->last == CLASS_LIB)
        v->lib++;
}

static int cmp_range(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int load_classes(const char *path)
{
    FILE *f = fopen(path, "r");
    char k;
    unsigned long long lo, hi;
    if (!f) {
        fprintf(stderr, "insn_count: cannot open %s\n", path);
        return -1;
    }
    while (fscanf(f, " %c %llx %llx", &k, &lo, &hi) == 3) {
        if (n_class_ranges == MAX_CLASS_RANGES) {
            fprintf(stderr, "insn_count: more than %d class ranges\n", MAX_CLASS_RANGES);
            fclose(f);
            return -1;
        }
        class_ranges[n_class_ranges].lo = lo;
        class_ranges[n_class_ranges].hi = hi;
        class_ranges[n_class_ranges].cls = k == 'L' ? CLASS_LIB : CLASS_INHERIT;
        n_class_ranges++;
    }
    fclose(f);
    qsort(class_ranges, n_class_ranges, sizeof class_ranges[0], cmp_range);
    for (int i = 0; i < MAX_VCPUS; i++)
        vcpus[i].last = CLASS_KERNEL;
    class_mode = true;
    return 0;
}

static void on_mark(unsigned int vcpu, void *u)
{
    char line[64];
    (void)u;
    if (class_mode) {
        struct vcpu_count *v = &vcpus[vcpu % MAX_VCPUS];
        snprintf(line, sizeof line, "mark %u %llu %llu\n", vcpu, (unsigned long long)v->total, (unsigned long long)v->lib);
        qemu_plugin_outs(line);
        return;
    }
    snprintf(line, sizeof line, "mark %llu\n", (unsigned long long)count);
    qemu_plugin_outs(line);
    if (prof_region >= 0 && n_marks == (uint64_t)(2 * prof_region)) {
        for (size_t i = 0; i < n_sites; i++)
            sites[i].base = sites[i].n;
        n_edges = 0;
        in_region = true;
    } else if (prof_region >= 0 && n_marks == (uint64_t)(2 * prof_region + 1)) {
        for (size_t i = 0; i < n_sites; i++)
            if (sites[i].n != sites[i].base) {
                snprintf(line, sizeof line, "prof 0x%llx %llu\n", (unsigned long long)sites[i].addr, (unsigned long long)(sites[i].n - sites[i].base));
                qemu_plugin_outs(line);
            }
        for (size_t i = 0; i < n_edges; i++) {
            snprintf(line, sizeof line, "call 0x%llx 0x%llx %llu\n", (unsigned long long)edges[i].from, (unsigned long long)edges[i].to, (unsigned long long)edges[i].n);
            qemu_plugin_outs(line);
        }
        in_region = false;
    }
    n_marks++;
}

static void on_exec(unsigned int vcpu, void *u)
{
    struct site *s = u;
    (void)vcpu;
    if (s->watched && in_region && last_site) {
        size_t i;
        for (i = 0; i < n_edges; i++)
            if (edges[i].from == last_site->addr && edges[i].to == s->addr)
                break;
        if (i == n_edges && n_edges < MAX_EDGES)
            edges[n_edges++] = (struct edge){ last_site->addr, s->addr, 0 };
        if (i < n_edges)
            edges[i].n++;
    }
    last_site = s;
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    (void)id;
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t a = qemu_plugin_insn_vaddr(insn);
        if (a == mark_addr)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
        if (skipped(a))
            continue;
        if (class_mode) {
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_class_exec, QEMU_PLUGIN_CB_NO_REGS, (void *)&class_cell[class_of(a)]);
            continue;
        }
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &count, 1);
        if (prof_region >= 0) {
            /* One fixed array: QEMU holds pointers into it. */
            if (n_sites == cap_sites) {
                fprintf(stderr, "insn_count: more than %zu translated instructions\n", cap_sites);
                abort();
            }
            sites[n_sites].addr = a;
            for (int w = 0; w < n_watch; w++)
                sites[n_sites].watched |= watch[w] == a;
            if (n_watch)
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_exec, QEMU_PLUGIN_CB_NO_REGS, &sites[n_sites]);
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &sites[n_sites].n, 1);
            n_sites++;
        }
    }
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "mark=", 5) == 0) {
            mark_addr = strtoull(argv[i] + 5, NULL, 0);
        } else if (strncmp(argv[i], "skip=", 5) == 0 && n_skip < MAX_SKIP) {
            char *end;
            skip_lo[n_skip] = strtoull(argv[i] + 5, &end, 0);
            skip_hi[n_skip] = strtoull(end + 1, NULL, 0);
            n_skip++;
        } else if (strncmp(argv[i], "watch=", 6) == 0 && n_watch < MAX_WATCH) {
            watch[n_watch++] = strtoull(argv[i] + 6, NULL, 0);
        } else if (strncmp(argv[i], "classes=", 8) == 0) {
            if (load_classes(argv[i] + 8) != 0)
                return -1;
        } else if (strncmp(argv[i], "prof=", 5) == 0) {
            prof_region = strtol(argv[i] + 5, NULL, 0);
            cap_sites = 1 << 20;
            sites = calloc(cap_sites, sizeof *sites);
            if (!sites)
                return -1;
        } else {
            fprintf(stderr, "insn_count: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    if (!mark_addr) {
        fprintf(stderr, "insn_count: mark=ADDR is required\n");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
    return 0;
}
