/*
 * The check of `customop run --on qemu|both` (docs/debugging.md), part of
 * the profile's TCG plugin: included by profile.c, which declares the
 * QEMU API and MAX_VCPUS. One instrument, two uses.
 */
/* ---- The check ----------------------------------------------------------
 *
 * A shadow byte per byte of the emulated board's RAM says what the runtime
 * handed out there: a live block (tcm_malloc, malloc/calloc/realloc/new,
 * torch::empty), an input, the output, what is left of a freed block, and
 * whether each byte was written. The runtime tells what it hands out and
 * takes back through its trace port (hal/src/xtensa/emulated/trace.rs):
 * byte stores at PORT + (field << 16 | 16 bits), fields 0..5 the event's
 * three words, field 6 the quiet switch (the allocator's own bookkeeping),
 * field 7 the commit with the event's kind. The kernel's loads and stores
 * are checked between a core's run-start and run-end events.
 *
 * A finding is kept per core and kind: the first access (pc, address,
 * size, the block it hit) and how many. Lines of check=FILE:
 *   "F kind vcpu pc addr size store what lo hi arg count other"
 * each followed by lines "T pc", the core's last distinct access
 * instructions before it (latest first), then "end". Kinds: 1 uninitialised read, 2 outside every block, 3 use
 * after free, 4 write into an input, 5 cross-core read, 6 cross-core
 * write, 7 stack beyond its limit (addr: the lowest, size: how far; lo
 * the limit, hi the top the kernel was launched at, 0 if not known).
 */
#define RAM_LO 0x60000000ull
#define RAM_BYTES (128ull << 20)
#define PORT_LO (RAM_LO + (80ull << 20))
#define PORT_HI (PORT_LO + (8ull << 16))
/* How far below its limit an access still counts as the stack's: the
 * switch's frame keeps a few words on the old stack, megabytes away. */
#define STACK_GUARD (1ull << 20)
/* Bytes around a libc heap block where an access is outside it (the
 * heap's 64-byte header lies in front of every block). */
#define REDZONE 16

enum { S_LIVE = 1, S_INIT = 2, S_RO = 4, S_FREED = 8, S_OUT = 16, S_RED = 32 };
enum { W_TCM = 1, W_MALLOC, W_CALLOC, W_TENSOR, W_TENSOR_FILLED, W_LIBRARY, W_INPUT = 100, W_OUTPUT };
enum { K_BLOCK = 1, K_FREE, K_INPUT, K_OUTPUT, K_STACK, K_RUN_START, K_RUN_END, K_REALLOC, K_KERNEL_STACK };
/* The stack a kernel has on the device (sim/src/device_limits.rs): its
 * -DSTACK_SIZE when that is above the core's local 8 KiB, else the local
 * stack, here with 8 KiB more for the library's own frames, which the
 * host does not count either. */
#define LOCAL_STACK (8u << 10)
#define LIBRARY_FRAMES (8u << 10)
enum { F_UNINIT = 1, F_OUTSIDE, F_FREED, F_INPUT, F_XREAD, F_XWRITE, F_STACK, N_FINDINGS };

static uint8_t *shadow;
/* The output's bytes: the core that last wrote each (+1) and a mask of the
 * cores that read it. */
static uint64_t out_lo, out_hi;
static uint8_t *out_writer, *out_readers;
static char *check_path;

struct block { uint64_t lo, hi; int what, arg; bool live; };
static struct block *blocks;
static size_t n_blocks, cap_blocks;
static pthread_mutex_t block_lock = PTHREAD_MUTEX_INITIALIZER;

/* The last distinct instruction addresses of a core's loads and stores:
 * a finding inside a library function (a copy, an element accessor
 * compiled out of line) is named by the kernel's line that led to it. */
#define TRAIL 4096
struct finding { uint64_t pc, addr, size, count; bool store, spill; long block; int other; uint64_t trail[TRAIL]; };
static struct cpu_state {
    uint16_t field[6];
    int quiet;
    bool in_run;
    uint64_t stack_limit, kernel_top, kernel_limit, stack_top_seen;
    uint64_t trail[TRAIL];
    unsigned trail_at;
    struct finding f[N_FINDINGS];
} cpus[MAX_VCPUS];

/* What the check needs of an instruction: its address and whether it is a
 * stack access (SP-based, or a register window's spill or fill). */
struct chk_rec { uint64_t pc; bool stacky, spill; };

static long add_block(uint64_t lo, uint64_t hi, int what, int arg)
{
    long i;
    pthread_mutex_lock(&block_lock);
    if (n_blocks == cap_blocks) {
        cap_blocks = cap_blocks ? 2 * cap_blocks : 256;
        blocks = realloc(blocks, cap_blocks * sizeof *blocks);
        if (!blocks)
            abort();
    }
    i = (long)n_blocks++;
    blocks[i] = (struct block){ lo, hi, what, arg, true };
    pthread_mutex_unlock(&block_lock);
    return i;
}

/* The block holding `a` (live first, then the latest dead one), or -1;
 * with `near`, also a live block whose redzone holds it. */
static long block_at(uint64_t a, bool near)
{
    long dead = -1, close = -1;
    pthread_mutex_lock(&block_lock);
    for (long i = (long)n_blocks - 1; i >= 0; i--) {
        if (a >= blocks[i].lo && a < blocks[i].hi) {
            if (blocks[i].live) {
                dead = i;
                close = -2;
                break;
            }
            if (dead < 0)
                dead = i;
        } else if (near && close == -1 && blocks[i].live && a + REDZONE >= blocks[i].lo && a < blocks[i].hi + REDZONE) {
            close = i;
        }
    }
    pthread_mutex_unlock(&block_lock);
    return close >= 0 && (dead < 0 || !blocks[dead].live) ? close : dead;
}

static bool in_ram(uint64_t a, uint64_t n)
{
    return a >= RAM_LO && a + n <= RAM_LO + RAM_BYTES && n <= RAM_BYTES;
}

static void mark(uint64_t lo, uint64_t hi, uint8_t set, uint8_t clear)
{
    if (!in_ram(lo, hi - lo))
        return;
    for (uint64_t a = lo; a < hi; a++)
        shadow[a - RAM_LO] = (uint8_t)((shadow[a - RAM_LO] & ~clear) | set);
}

static void redzones(uint64_t lo, uint64_t hi)
{
    for (int side = 0; side < 2; side++) {
        uint64_t a = side ? hi : lo - REDZONE;
        for (int i = 0; i < REDZONE; i++, a++)
            if (in_ram(a, 1) && !(shadow[a - RAM_LO] & (S_LIVE | S_RO | S_OUT)))
                shadow[a - RAM_LO] = S_RED;
    }
}

static void place(uint64_t lo, uint64_t n, int what, int arg)
{
    uint8_t set = S_LIVE;
    if (what == W_CALLOC || what == W_TENSOR_FILLED || what == W_LIBRARY)
        set |= S_INIT;
    if (!in_ram(lo, n) || n == 0)
        return;
    add_block(lo, lo + n, what, arg);
    mark(lo, lo + n, set, 0xff);
    /* Only the libc heap keeps its own 64-byte header in front of every
     * block; the TCM pool and the HBM heap put blocks (and buffers this
     * check does not see: stream buffers, HBM stacks) back to back. */
    if (what == W_MALLOC || what == W_CALLOC)
        redzones(lo, lo + n);
}

static void take_back(uint64_t lo)
{
    long i = -1;
    uint64_t hi = 0;
    pthread_mutex_lock(&block_lock);
    for (long k = (long)n_blocks - 1; k >= 0; k--)
        if (blocks[k].live && blocks[k].lo == lo) {
            blocks[k].live = false;
            i = k;
            hi = blocks[k].hi;
            break;
        }
    pthread_mutex_unlock(&block_lock);
    if (i >= 0)
        mark(lo, hi, S_FREED, 0xff);
}

static void moved(uint64_t to, uint64_t from, uint64_t n)
{
    uint64_t old = 0, keep;
    uint8_t *saved;
    pthread_mutex_lock(&block_lock);
    for (long k = (long)n_blocks - 1; k >= 0; k--)
        if (blocks[k].live && blocks[k].lo == from) {
            old = blocks[k].hi - blocks[k].lo;
            break;
        }
    pthread_mutex_unlock(&block_lock);
    keep = old < n ? old : n;
    saved = calloc(1, keep + 1);
    if (!saved)
        abort();
    if (in_ram(from, keep))
        memcpy(saved, shadow + (from - RAM_LO), keep);
    take_back(from);
    place(to, n, W_MALLOC, 0);
    for (uint64_t i = 0; i < keep && in_ram(to + i, 1); i++)
        if (saved[i] & S_INIT)
            shadow[to + i - RAM_LO] |= S_INIT;
    free(saved);
}

static void on_event(unsigned v, int kind)
{
    struct cpu_state *c = &cpus[v];
    uint64_t w[3];
    for (int i = 0; i < 3; i++)
        w[i] = c->field[2 * i] | ((uint64_t)c->field[2 * i + 1] << 16);
    switch (kind) {
    case K_BLOCK:
        place(w[0], w[1], (int)w[2], 0);
        break;
    case K_FREE:
        take_back(w[0]);
        break;
    case K_REALLOC:
        moved(w[0], w[1], w[2]);
        break;
    case K_STACK:
        c->stack_limit = w[0];
        break;
    case K_KERNEL_STACK:
        c->kernel_top = w[1] ? w[0] : 0;
        c->kernel_limit = w[1] ? w[0] - (w[1] > LOCAL_STACK ? w[1] : LOCAL_STACK + LIBRARY_FRAMES) : 0;
        break;
    case K_RUN_START:
        c->in_run = true;
        break;
    case K_RUN_END:
        c->in_run = false;
        break;
    default:
        break;
    }
}

static void port_store(unsigned v, uint64_t vaddr)
{
    unsigned field = (unsigned)((vaddr - PORT_LO) >> 16), value = (unsigned)(vaddr & 0xffff);
    if (field < 6)
        cpus[v].field[field] = (uint16_t)value;
    else if (field == 6)
        cpus[v].quiet += value ? 1 : -1;
    else
        on_event(v, (int)value);
}

static void found(unsigned v, int kind, const struct chk_rec *r, uint64_t a, uint64_t size, bool store, int other)
{
    struct finding *f = &cpus[v].f[kind];
    /* A stack finding names the kernel's own access, not a window spill
     * in the vectors, when there is one. */
    if (f->count && f->spill && !r->spill) {
        f->pc = r->pc;
        f->spill = false;
    }
    if (f->count++ == 0 || (kind == F_STACK && a < f->addr)) {
        bool first = f->count == 1;
        f->addr = a;
        f->size = size;
        if (first) {
            struct cpu_state *c = &cpus[v];
            for (unsigned i = 0; i < TRAIL; i++)
                f->trail[i] = c->trail[(c->trail_at + TRAIL - i) % TRAIL];
            f->pc = r->pc;
            f->spill = r->spill;
            f->store = store;
            f->block = kind == F_STACK ? -1 : block_at(a, kind == F_OUTSIDE);
            f->other = other;
        }
    }
}

static void cross_core(unsigned v, const struct chk_rec *r, uint64_t a, uint64_t n, bool store)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t o;
        uint8_t me = (uint8_t)(1u << v), w;
        if (a + i < out_lo || a + i >= out_hi)
            continue;
        o = a + i - out_lo;
        w = out_writer[o];
        if (store) {
            if (w && w != v + 1) {
                found(v, F_XWRITE, r, a, n, store, w - 1);
                return;
            }
            if (out_readers[o] & ~me) {
                int other = __builtin_ctz(out_readers[o] & ~me);
                found(v, F_XREAD, r, a, n, store, other);
                return;
            }
            out_writer[o] = (uint8_t)(v + 1);
        } else {
            if (w && w != v + 1) {
                found(v, F_XREAD, r, a, n, store, w - 1);
                return;
            }
            out_readers[o] |= me;
        }
    }
}

static void on_check_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *u)
{
    const struct chk_rec *r = u;
    unsigned v = vcpu % MAX_VCPUS;
    struct cpu_state *c = &cpus[v];
    bool store = qemu_plugin_mem_is_store(info);
    uint64_t n = 1u << qemu_plugin_mem_size_shift(info);
    uint8_t any = 0, all = 0xff;
    if (vaddr >= PORT_LO && vaddr < PORT_HI) {
        if (store)
            port_store(v, vaddr);
        return;
    }
    if (!c->in_run || c->quiet > 0)
        return;
    if (c->trail[c->trail_at] != r->pc) {
        c->trail_at = (c->trail_at + 1) % TRAIL;
        c->trail[c->trail_at] = r->pc;
    }
    /* Below the kernel's limit: any access inside the stack region the
     * board gave it (nothing else lives there), and below that region
     * a stack access (SP-based, or a window spill). */
    {
        uint64_t limit = c->kernel_limit ? c->kernel_limit : c->stack_limit;
        bool in_region = c->kernel_limit && vaddr >= c->stack_limit;
        if (limit && vaddr < limit && vaddr + STACK_GUARD >= limit && (r->stacky || in_region)) {
            found(v, F_STACK, r, vaddr, limit - vaddr, store, -1);
            c->stack_top_seen = c->kernel_top;
        }
    }
    if (!in_ram(vaddr, n))
        return;
    for (uint64_t i = 0; i < n; i++) {
        any |= shadow[vaddr - RAM_LO + i];
        all &= shadow[vaddr - RAM_LO + i];
    }
    if (!any)
        return;
    /* An access partly in a block is the block's (word reads of a copy's
     * edges): only one wholly outside, or wholly freed, is a finding. */
    if (!(any & (S_LIVE | S_RO | S_OUT))) {
        if (all & S_FREED)
            found(v, F_FREED, r, vaddr, n, store, -1);
        else if (!(any & S_FREED) || (any & S_RED))
            found(v, F_OUTSIDE, r, vaddr, n, store, -1);
        return;
    }
    if (store) {
        if (any & S_RO) {
            found(v, F_INPUT, r, vaddr, n, store, -1);
            return;
        }
        if (any & S_OUT)
            cross_core(v, r, vaddr, n, store);
        for (uint64_t i = 0; i < n; i++)
            shadow[vaddr - RAM_LO + i] |= S_INIT;
        return;
    }
    if (!(any & S_INIT)) {
        found(v, F_UNINIT, r, vaddr, n, store, -1);
        return;
    }
    if (any & S_OUT)
        cross_core(v, r, vaddr, n, store);
}

/* Whether the instruction at `insn` accesses the stack: a load or store
 * based on a1 (SP), or L32E/S32E (the window handlers' spills). */
static bool stacky(const struct qemu_plugin_insn *insn)
{
    uint8_t b[4];
    size_t n = insn_bytes(insn, b, sizeof b);
    unsigned op0, s;
    if (n < 2)
        return false;
    op0 = b[0] & 15;
    s = b[1] & 15;
    if (n == 2)
        return (op0 == 8 || op0 == 9) && s == 1;
    if (op0 == 2 || op0 == 3)
        return s == 1;
    return op0 == 0 && (b[2] & 15) == 9 && ((b[2] >> 4) == 0 || (b[2] >> 4) == 4);
}

static void check_insn(struct qemu_plugin_insn *insn)
{
    struct chk_rec *r = calloc(1, sizeof *r);
    if (!r)
        abort();
    r->pc = qemu_plugin_insn_vaddr(insn);
    r->stacky = stacky(insn);
    uint8_t b0 = 0;
    r->spill = r->stacky && insn_bytes(insn, &b0, 1) == 1 && (b0 & 15) == 0;
    qemu_plugin_register_vcpu_mem_cb(insn, on_check_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, r);
}

static void write_findings(void)
{
    FILE *f = fopen(check_path, "w");
    if (!f) {
        fprintf(stderr, "customop check plugin: cannot write %s\n", check_path);
        return;
    }
    for (unsigned v = 0; v < MAX_VCPUS; v++)
        for (int k = 1; k < N_FINDINGS; k++) {
            struct finding *x = &cpus[v].f[k];
            struct block b = { 0, 0, 0, 0, false };
            if (!x->count)
                continue;
            if (x->block >= 0)
                b = blocks[x->block];
            if (k == F_STACK)
                b = (struct block){ x->addr + x->size, cpus[v].stack_top_seen, 0, 0, false };
            fprintf(f, "F %d %u %llx %llx %llu %d %d %llx %llx %d %llu %d\n", k, v, (unsigned long long)x->pc, (unsigned long long)x->addr,
                    (unsigned long long)x->size, x->store, b.what, (unsigned long long)b.lo, (unsigned long long)b.hi, b.arg,
                    (unsigned long long)x->count, x->other);
            for (unsigned i = 0; i < TRAIL && x->trail[i]; i++)
                fprintf(f, "T %llx\n", (unsigned long long)x->trail[i]);
        }
    fputs("end\n", f);
    fclose(f);
}

/* tensors=FILE: "i lo hi arg" an input, "o lo hi" the output (hex). No
 * redzones: the invocation block and the other tensors lie right next to
 * them, and the runtime reads those. */
static int load_tensors(const char *path)
{
    FILE *f = fopen(path, "r");
    char k;
    unsigned long long lo, hi;
    int arg = 0;
    if (!f) {
        fprintf(stderr, "customop check plugin: cannot open %s\n", path);
        return -1;
    }
    while (fscanf(f, " %c %llx %llx", &k, &lo, &hi) == 3) {
        if (k == 'i' && fscanf(f, "%d", &arg) == 1 && in_ram(lo, hi - lo)) {
            add_block(lo, hi, W_INPUT, arg);
            mark(lo, hi, S_RO | S_INIT, 0xff);
        } else if (k == 'o' && in_ram(lo, hi - lo) && !out_writer) {
            add_block(lo, hi, W_OUTPUT, 0);
            mark(lo, hi, S_OUT | S_LIVE, 0xff);
            out_lo = lo;
            out_hi = hi;
            out_writer = calloc(1, hi - lo + 1);
            out_readers = calloc(1, hi - lo + 1);
            if (!out_writer || !out_readers)
                abort();
        } else {
            fprintf(stderr, "customop check plugin: %s: bad line `%c %llx %llx`\n", path, k, lo, hi);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    return 0;
}

static int check_init(void)
{
    shadow = mmap(NULL, RAM_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (shadow == MAP_FAILED) {
        fprintf(stderr, "customop check plugin: no memory for the shadow\n");
        return -1;
    }
    return 0;
}

