/*
 * TCG plugin for QEMU 7.2 behind `customop run --on qemu --profile DIR`:
 * per vCPU (core), executed instructions per address, loads and stores per
 * address by memory class, and the emulated DMA engine's descriptors and
 * bytes by direction. Built by the tool itself (gcc -shared -fPIC); QEMU
 * 7.2 ships no qemu-plugin.h, so the few API functions used are declared
 * here with the 7.2 signatures.
 *
 * Arguments (all optional but out=):
 *   out=FILE        where the counts go, written at exit
 *   classes=FILE    lines "CLASS lo hi": memory classes of data addresses
 *                   (t tcm, h hbm, s sbuf, k stack, i image, r registers)
 *                   and "x lo hi" code not counted (the software DMA
 *                   engine, hardware on the Q7), "c lo hi" the engine's
 *                   copy (its stores are the DMA bytes) and "e lo hi"
 *                   the copy's entry (one per descriptor).
 *
 * Instructions are counted per translation block: one exec callback per
 * block executed (it knows the vCPU, which 7.2's inline counters do not),
 * adding 1 to the block's per-vCPU count; an instruction's count is the
 * sum of the counts of the blocks holding it. Memory accesses need the
 * address, so each load/store instruction has a memory callback.
 *
 * Output lines: "I vcpu addr n" (instructions), "M vcpu addr class loads
 * stores", "D vcpu class descriptors bytes" (DMA, by destination class).
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
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

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
    ((struct tb_rec *)u)->count[vcpu % MAX_VCPUS]++;
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
    (void)u;
    dma_pending[vcpu % MAX_VCPUS] = true;
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
}


#include "profile_check.h"

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb), counted = 0;
    struct tb_rec *r;
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
        if (!out_path)
            continue;
        if (a >= copy_lo && a < copy_hi)
            qemu_plugin_register_vcpu_mem_cb(insn, on_copy_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W, NULL);
        if (a >= copy_entry_lo && a < copy_entry_hi)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_copy_entry, QEMU_PLUGIN_CB_NO_REGS, NULL);
        if (in_skip(a))
            continue;
        r->addr[counted++] = a;
        struct mem_rec *m = calloc(1, sizeof *m);
        if (!m)
            abort();
        m->addr = a;
        m->next = mems;
        mems = m;
        qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, m);
    }
    r->n = counted;
    r->next = tbs;
    tbs = r;
    if (counted)
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
        } else if (class_of_letter(k) > 0 && n_data < MAX_RANGES) {
            data_ranges[n_data++] = (struct range){ lo, hi, class_of_letter(k) };
        } else {
            fprintf(stderr, "customop profile plugin: %s: bad line `%c %llx %llx`\n", path, k, lo, hi);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
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
        } else {
            fprintf(stderr, "customop profile plugin: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    if (!out_path && !check_path) {
        fprintf(stderr, "customop profile plugin: out=FILE or check=FILE is required\n");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
    qemu_plugin_register_atexit_cb(id, on_exit_write, NULL);
    return 0;
}
