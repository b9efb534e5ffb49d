// The accessors a Tensor hands out (SPEC §8): per-element
// (TensorAccessor, acc[i][j]), read and write streams, and the TCM
// accessor. Per-element indexing is inline arithmetic; the leaf's
// translate is inline on the device when the tensor's window allows it
// and neuron_translate otherwise; streams and TCM are C export calls.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "c10/core/ScalarType.h"
#include "c10/util/ArrayRef.h"
#include "neuron/detail/traits.hpp"
#include "neuroncustomop.h"

namespace at {

namespace detail {
template <class T>
constexpr uint8_t isa_dtype_of() {
    return c10::isa_dtype(c10::CppTypeToScalarType<T>::value);
}
template <class T>
constexpr bool is_arithmetic() {
    return neuron::detail::is_integral<T>::value || neuron::detail::is_floating_point<T>::value;
}
}  // namespace detail

// ---- per-element accessor -----------------------------------------------------

namespace detail {

// The ABI-fixed translation context (SPEC §3), as runtime/src/translate.rs
// asserts it; the inline hit reads the hit table that follows it.
static_assert(sizeof(neuron_map_record) == 32, "map record: 32 bytes");
static_assert(offsetof(neuron_map_record, ptr) == 0 && offsetof(neuron_map_record, window) == 8, "map record layout");
static_assert(offsetof(neuron_map_record, mask) == 16, "map record layout");
static_assert(offsetof(neuron_translation_ctx, last_installed) == 161, "context layout");
static_assert(sizeof(neuron_translation_ctx) == 168, "context: 168 bytes");

// How an accessor reaches its elements, decided once when it is made.
enum : uint32_t {
    // The library does the work: a peel call per dimension and a translate
    // per element (a refused accessor, an index that went out of range, a
    // tensor that is not row-major or whose byte offsets need 64 bits).
    kPathLibrary = 0,
    // Offsets inline in 32 bits; the element's translate is the library's
    // (the host, where the simulator counts every translation).
    kPathNarrow = 1,
    // The whole tensor is in a pinned window of this core (hbm_scratch or
    // SBUF): pinned records are set once at init and never evicted, so
    // the accessor indexes the window's NX pointer directly.
    kPathPinned = 2,
    // HBM through the dynamic windows: the translator's hit table is read
    // inline; anything it does not answer is neuron_translate's.
    kPathDynamic = 3,
    // The host: the narrow path with the library's window and the
    // sanitizer's element states lent in a neuron_host_elements
    // (sim/src/host_elements.rs), checked in place per element.
    kPathHost = 4,
};

#if !defined(__XTENSA__) && !defined(NEURON_DEVICE)
#define NEURON_HOST_ELEMENTS 1
// The host has no pinned path (element_path makes one on the device only).
constexpr bool kPinnedPath = false;
// The host's element path inline in the kernel's loop (out of line, its
// call and the path's spills were a third of an element's time).
#define NEURON_HOST_INLINE __attribute__((always_inline))
#else
#define NEURON_HOST_INLINE
constexpr bool kPinnedPath = true;
#endif

// 32-bit fields: one l32i each even deep in a kernel's frame.
struct ElementPath {
    neuron_translation_ctx* ctx;
    uint32_t kind;
#ifdef NEURON_HOST_ELEMENTS
    // kPathHost: the lent entry, valid while its id is `id`, and the host
    // address of SoC 0 in its memory's view (the entry's `view` less its
    // `base`): an element's pointer is its address plus this, fixed for
    // the accessor's life, so the loop keeps it in a register and an
    // element's load waits for no load of the entry (only the checks do).
    uint32_t id = 0;
    neuron_host_elements* host = nullptr;
    uintptr_t view = 0;
#endif
};

#ifdef NEURON_HOST_ELEMENTS
// The host: an index and the kernel's line that wrote it. `acc[i]` converts
// `i` implicitly, so the default arguments are evaluated at the kernel's
// own call: the file and line an error there is reported at
// (neuron_error_site). Constants, used on the error path only; the
// device's index is the plain integer.
struct Index {
    NEURON_HOST_INLINE Index(int64_t i, const char* f = __builtin_FILE(), uint32_t l = __builtin_LINE()) : v(i), file(f), line(l) {}
    int64_t v;
    const char* file;
    uint32_t line;
};
// The library's peel of an index out of range (or on the library path),
// and, when it refused it, where: the tensor, the index, the size and the
// kernel's line.
inline uint64_t index_peel(uint64_t addr, int64_t size, int64_t stride, const Index& i, uint32_t elem, uint32_t dims_left) {
    const uint64_t a = neuron_index_peel(addr, size, stride, i.v, elem);
    if (a == 0) neuron_error_site(addr, i.v, size, dims_left, i.file, i.line);
    return a;
}
#define NEURON_INDEX_VALUE(i) ((i).v)
// The caller's file and line as defaulted parameters of a library call
// that can fail (accessor(), a stream's read and write), host only.
#define NEURON_CALLER_PARAMS const char *caller_file = __builtin_FILE(), uint32_t caller_line = __builtin_LINE()
#define NEURON_CALLER_ARGS_TAIL , caller_file, caller_line
#define NEURON_CALLER_PARAMS_TAIL , const char *caller_file, uint32_t caller_line
#define NEURON_CALLER_PARAMS_DEFAULT_TAIL , NEURON_CALLER_PARAMS
#define NEURON_CALLER_SITE(addr) neuron_error_site((addr), 0, 0, 0, caller_file, caller_line)
// dims_left of an index into the tensor taken flat (a stream's position).
#define NEURON_SITE_FLAT 0xFFFFFFFFu
// A stream's element: its flat position against the tensor's element count
// (none for a stream that is not open).
#define NEURON_STREAM_SITE(s) \
    neuron_error_site((s).addr, static_cast<int64_t>((s).pos), static_cast<int64_t>((s).numel), (s).open == 1 ? NEURON_SITE_FLAT : 0, caller_file, caller_line)
#else
using Index = int64_t;
inline uint64_t index_peel(uint64_t addr, int64_t size, int64_t stride, int64_t i, uint32_t elem, uint32_t) {
    return neuron_index_peel(addr, size, stride, i, elem);
}
#define NEURON_INDEX_VALUE(i) (i)
#define NEURON_CALLER_PARAMS
#define NEURON_CALLER_ARGS_TAIL
#define NEURON_CALLER_PARAMS_TAIL
#define NEURON_CALLER_PARAMS_DEFAULT_TAIL
#define NEURON_CALLER_SITE(addr) ((void)0)
#define NEURON_STREAM_SITE(s) ((void)0)
#endif

// The fast path's bounds of an accessor on the library path: every index
// is out of range, so every peel is the library's.
constexpr int64_t kNoBounds[NEURON_MAX_DIMS] = {};

// The translator's hit table, in neuron_translator_abi after the context
// (ours, not SPEC §3's; the struct is generated from the Rust
// `TranslatorAbi`, whose device layout runtime/src/translate.rs asserts).
// Slot: the address's low-word top byte plus its high word; tag: the high
// word. Index and tag name one 16 MiB granule, so a hit on any record is
// one compare; an empty slot's tag (2^31) has an index past the table. A
// slot is two words, the tag then the delta (the pointer is the address's
// low word + delta), read as one 8-aligned 64-bit word: two loads with the
// table's offset folded into each (two field reads got it added once in
// a register, two instructions more).
static_assert(NEURON_HIT_SLOT_BYTES == sizeof(uint64_t), "hit slot layout");
#if defined(__XTENSA__)
static_assert(sizeof(neuron_hit_slot) == sizeof(uint64_t) && alignof(neuron_hit_slot) == alignof(uint64_t), "hit slot layout");
static_assert(offsetof(neuron_translator_abi, ctx) == 0, "ctx points to the translator's ABI part");
static_assert(offsetof(neuron_translator_abi, hits) == NEURON_HIT_TABLE_OFFSET, "hit table offset");
#endif

// The translate hit through the hit table, read in place (the device
// layout: called on the device only). The caller knows `c` is this core's
// context (checked when the accessor was made) and, as kernel code, runs
// while no entry point holds it. Anything the table does not answer is
// neuron_translate's (which puts a scanned hit in the table).
inline void* translate_hit_inline(neuron_translation_ctx* c, uint64_t a) {
    const uint32_t hi = static_cast<uint32_t>(a >> 32);
    const uint32_t i = (static_cast<uint32_t>(a) >> 24) + hi;
    if (i < NEURON_HIT_SLOTS) {
        const neuron_hit_slot* slots = reinterpret_cast<const neuron_translator_abi*>(c)->hits.slots;
        const uint64_t slot = reinterpret_cast<const uint64_t*>(slots)[i];
        if (static_cast<uint32_t>(slot) == hi) return reinterpret_cast<void*>(static_cast<uintptr_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(slot >> 32)));
    }
    return neuron_translate(c, a);
}

#ifdef NEURON_HOST_ELEMENTS
// The layout sim/src/host_elements.rs asserts.
static_assert(sizeof(neuron_host_elements) == 104, "host elements: 104 bytes");
static_assert(offsetof(neuron_host_elements, generation) == 8 && offsetof(neuron_host_elements, me) == 12, "host elements layout");
static_assert(offsetof(neuron_host_elements, input) == 14, "host elements layout");
static_assert(offsetof(neuron_host_elements, lo) == 16 && offsetof(neuron_host_elements, lane_mask) == 84, "host elements layout");
static_assert(offsetof(neuron_host_elements, off) == 86, "host elements layout");
static_assert(offsetof(neuron_host_elements, nx) == 32 && offsetof(neuron_host_elements, states) == 48, "host elements layout");
static_assert(offsetof(neuron_host_elements, base) == 64 && offsetof(neuron_host_elements, id) == 80, "host elements layout");
static_assert(offsetof(neuron_host_elements, view) == 88 && offsetof(neuron_host_elements, sp_floor) == 96, "host elements layout");

// The cached-hit lanes per record (capi's HIT_LANES; the entry's
// `lane_mask` + 1, which sim/src/host_elements.rs asserts): a constant,
// so a hit is not a load of the mask more.
constexpr uint32_t kHostHitLanes = 4;

// The caller's stack pointer (the stack rule's depth, as a hook notes it).
inline uintptr_t host_sp() {
#if defined(__x86_64__)
    uintptr_t sp;
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
    return sp;
#elif defined(__aarch64__)
    uintptr_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    return sp;
#else
    return reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
#endif
}

// Whether the lent entry answers the host's element at `a` exactly as
// the hooks would (its window maps `a` and is still valid: open, which a
// bind or unbind on the thread undoes, and no entry point running or
// window reprogrammed since it opened).
NEURON_HOST_INLINE inline bool host_window(uint64_t a, const neuron_host_elements* h, uint32_t id) {
    return h->id == id && a - h->lo < h->len && *h->open_generation == h->generation;
}

// The host's element past its entry: the hook (which reports what the
// sanitizer finds and counts the translate), then, when the window did not
// answer, the window re-opened where the hook mapped `a`. Out of line and
// cold: the element loop keeps only the fast path and its registers.
template <uint32_t Bytes, bool Store>
__attribute__((noinline, cold)) void* host_hook(uint64_t a, neuron_translation_ctx* ctx, neuron_host_elements* h, uint32_t id) {
    const bool window = host_window(a, h, id);
    void* q = Store ? neuron_translate_store(ctx, a, Bytes) : neuron_translate_load(ctx, a, Bytes);
    if (!window && h->id == id && !h->off) neuron_host_elements_open(h, ctx, a);
    return q;
}

// The host's element in place, into `q`, when the lent entry answers it
// exactly as the hooks would (host_window; and the sanitizer needs nothing
// reported: a load of an element only this core wrote, or of an unwatched
// one or an input's; a store not into an input, which sets this core's
// writer bit), counting the translate hit it stands for and the stack
// depth; false otherwise (the caller takes host_hook). The pointer is the
// SoC view's (the memory the window shows), from the accessor's path: no
// load of the entry is on the way to the element.
template <uint32_t Bytes, bool Store>
NEURON_HOST_INLINE inline bool host_element(uint64_t a, const ElementPath& p, uint8_t*& q) {
    neuron_host_elements* h = p.host;
    if (__builtin_expect(!host_window(a, h, p.id), 0)) return false;
    const uint64_t e = (a - h->lo) / Bytes;
    uint16_t* st = h->states;
    if (Store) {
        if (__builtin_expect(h->input, 0)) return false;
        if (st) {
            const uint16_t s = __atomic_load_n(st + e, __ATOMIC_RELAXED);
            // No hint: a kernel writing each output element once
            // takes this branch every time, one updating in place
            // almost never.
            // States are lent to a run's one writer only: a load and
            // a store, no atomic or.
            if ((s & h->me) == 0) {
                __atomic_store_n(st + e, static_cast<uint16_t>(s | h->me), __ATOMIC_RELAXED);
            }
        }
    } else if (st && __builtin_expect(__atomic_load_n(st + e, __ATOMIC_RELAXED) != h->me, 0)) {
        return false;
    }
    // The stack depth: nothing to note at or above the entry's floor
    // (at or above the slot's lowest address noted).
    const uintptr_t sp = host_sp();
    if (__builtin_expect(sp < h->sp_floor, 0)) {
        if (sp < *h->sp_low) *h->sp_low = sp;
        h->sp_floor = sp;
    }
    // The lane count is the library's HIT_LANES (asserted there).
    h->lanes[e & (kHostHitLanes - 1)]++;
    q = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(a) + p.view);
    return true;
}
#endif

// Where element address `a` (of `Bytes` bytes, stored to when `Store`) is
// off the pinned path (null: refused; the library recorded why). On the
// host the simulator's sanitizer hears of each load and store
// (neuron_translate_load/store, sim/src/element_hooks.rs).
template <uint32_t Bytes, bool Store>
NEURON_HOST_INLINE inline void* element_ptr(uint64_t a, const ElementPath& p) {
#if defined(__XTENSA__)
    if (p.kind == kPathDynamic) return translate_hit_inline(p.ctx, a);
#endif
#if defined(__XTENSA__) || defined(NEURON_DEVICE)
    return a ? neuron_translate(p.ctx, a) : nullptr;
#else
    // The host path is the caller's (ElementRef, host_element).
    if (!a) return nullptr;
    return Store ? neuron_translate_store(p.ctx, a, Bytes) : neuron_translate_load(p.ctx, a, Bytes);
#endif
}

// The path of a tensor's accessor of `rank` dimensions of `elem` bytes,
// and (pinned) the NX address it indexes from. Inline offsets need a
// row-major tensor (innermost stride 1, the others at most 32 bits) whose
// largest byte offset, and its end within the 4 GiB the address's low
// word spans, fit 32 bits; on the device, then, the window that shows it.
inline ElementPath element_path(const neuron_tensor& t, size_t rank, uint64_t elem, bool store, uint64_t* base) {
    ElementPath p{};
    p.ctx = t.storage.ctx;
    p.kind = kPathLibrary;
    const uint64_t addr = t.storage.addr;
    if (rank == 0 || t.strides[rank - 1] != 1) return p;
    uint64_t last = 0;  // largest element offset, in elements
    for (size_t d = 0; d < rank; d++) {
        const int64_t n = t.sizes[d], s = t.strides[d];
        if (n < 0 || s < 0 || n > INT64_C(0xFFFFFFFF) || s > INT64_C(0xFFFFFFFF)) return p;
        if (n == 0) continue;  // every index is out of range: the library's
        uint64_t step = 0;
        if (__builtin_mul_overflow(static_cast<uint64_t>(n - 1), static_cast<uint64_t>(s), &step) || __builtin_add_overflow(last, step, &last)) return p;
    }
    uint64_t span = 0;  // bytes from the first to past the last element
    if (addr == 0 || __builtin_mul_overflow(last + 1, elem, &span) || span > UINT64_C(0x100000000) - static_cast<uint32_t>(addr)) return p;
    p.kind = kPathNarrow;
#if defined(__XTENSA__)
    (void)store;
    // A pinned window shows the whole tensor: its pointer, once.
    if (void* first = neuron_translate_pinned(p.ctx, addr, span)) {
        p.kind = kPathPinned;
        *base = reinterpret_cast<uintptr_t>(first);
        return p;
    }
    if (p.ctx == nullptr || p.ctx != neuron_translate_ctx()) return p;
    p.kind = kPathDynamic;
#else
    (void)base;
#ifdef NEURON_HOST_ELEMENTS
    // The host: the library's window and the sanitizer's states, lent.
    if (neuron_host_elements* h = neuron_host_elements_make(p.ctx, addr, span, static_cast<uint32_t>(elem), store)) {
        p.kind = kPathHost;
        p.id = h->id;
        p.host = h;
        p.view = reinterpret_cast<uintptr_t>(h->view) - static_cast<uintptr_t>(addr);
    }
#else
    (void)store;
#endif
#endif
    return p;
}

// One volatile access of an element at `p`: an arithmetic type directly;
// c10::Half and c10::BFloat16 (the only class elements: 16-bit classes,
// which have no volatile copy or assignment) through their bits.
template <class T>
inline T load_element(const void* p) {
    if constexpr (is_arithmetic<T>()) {
        return *static_cast<const volatile T*>(p);
    } else {
        static_assert(sizeof(T) == 2, "the class elements are the 16-bit floats");
        return __builtin_bit_cast(T, *static_cast<const volatile uint16_t*>(p));
    }
}
template <class T>
inline void store_element(void* p, T v) {
    if constexpr (is_arithmetic<T>()) {
        *static_cast<volatile T*>(p) = v;
    } else {
        static_assert(sizeof(T) == 2, "the class elements are the 16-bit floats");
        *static_cast<volatile uint16_t*>(p) = __builtin_bit_cast(uint16_t, v);
    }
}

}  // namespace detail

// One element: reading or writing it is one volatile access at the
// pointer its accessor's path gives; no pointer is kept (a later
// translate may move a dynamic window).
template <class T, bool ReadOnly>
class ElementRef {
public:
    ElementRef(uint64_t addr, const detail::ElementPath& path) : addr_(addr), path_(path) {}
    ElementRef(uint64_t addr, neuron_translation_ctx* ctx) : addr_(addr), path_{ctx, detail::kPathLibrary} {}
    NEURON_HOST_INLINE operator T() const {
#ifdef NEURON_HOST_ELEMENTS
        // The host path (its entry is set on it only). An inline path's
        // address is never 0 (the tensor's is not, and its span does not
        // wrap the low word).
        if (path_.host) {
            uint8_t* q;
            if (__builtin_expect(detail::host_element<sizeof(T), false>(addr_, path_, q), 1)) return detail::load_element<T>(q);
            void* p = detail::host_hook<sizeof(T), false>(addr_, path_.ctx, path_.host, path_.id);
            return p ? detail::load_element<T>(p) : T{};
        }
#endif
        if (detail::kPinnedPath && path_.kind == detail::kPathPinned) return detail::load_element<T>(ptr());
        void* p = detail::element_ptr<sizeof(T), false>(addr_, path_);
        return p ? detail::load_element<T>(p) : T{};
    }
    // Half/BFloat16 elements read straight as float too (one conversion,
    // as from libtorch's Half&).
    template <class U = T, class = neuron::detail::enable_if_t<!detail::is_arithmetic<U>()>>
    operator float() const {
        return static_cast<float>(this->operator T());
    }
    NEURON_HOST_INLINE const ElementRef& operator=(T v) const {
        static_assert(!ReadOnly, "a const tensor's accessor is read-only");
#ifdef NEURON_HOST_ELEMENTS
        if (path_.host) {
            uint8_t* q;
            if (__builtin_expect(detail::host_element<sizeof(T), true>(addr_, path_, q), 1)) {
                detail::store_element<T>(q, v);
            } else if (void* p = detail::host_hook<sizeof(T), true>(addr_, path_.ctx, path_.host, path_.id)) {
                detail::store_element<T>(p, v);
            }
            return *this;
        }
#endif
        if (detail::kPinnedPath && path_.kind == detail::kPathPinned) {
            detail::store_element<T>(ptr(), v);
            return *this;
        }
        void* p = detail::element_ptr<sizeof(T), true>(addr_, path_);
        if (p) detail::store_element<T>(p, v);
        return *this;
    }
    const ElementRef& operator=(const ElementRef& o) const { return *this = o.operator T(); }
    template <class V>
    const ElementRef& operator+=(const V& v) const { return *this = static_cast<T>(this->operator T() + v); }
    template <class V>
    const ElementRef& operator-=(const V& v) const { return *this = static_cast<T>(this->operator T() - v); }
    template <class V>
    const ElementRef& operator*=(const V& v) const { return *this = static_cast<T>(this->operator T() * v); }
    template <class V>
    const ElementRef& operator/=(const V& v) const { return *this = static_cast<T>(this->operator T() / v); }

private:
    // Pinned: the address is the NX pointer itself.
    void* ptr() const { return reinterpret_cast<void*>(static_cast<uintptr_t>(addr_)); }
    uint64_t addr_;
    detail::ElementPath path_;
};

// N dimensions left to index; acc[i] peels one. In bounds on an inline
// path that is a compare and a multiply-add on the low word; otherwise
// (and for every out-of-range index) it is the library's peel, which
// records the error and yields address 0, which the leaf refuses.
template <class T, size_t N, bool ReadOnly = false>
class TensorAccessor {
public:
    TensorAccessor(const int64_t* sizes, const int64_t* strides, uint64_t addr, neuron_translation_ctx* ctx)
        : sizes_(sizes), strides_(strides), bounds_(detail::kNoBounds), addr_(addr), path_{ctx, detail::kPathLibrary} {}
    TensorAccessor(const int64_t* sizes, const int64_t* strides, const int64_t* bounds, uint64_t addr, const detail::ElementPath& path)
        : sizes_(sizes), strides_(strides), bounds_(bounds), addr_(addr), path_(path) {
#ifdef NEURON_HOST_ELEMENTS
        bound_ = static_cast<uint64_t>(bounds[0]);
#endif
    }
    NEURON_HOST_INLINE auto operator[](detail::Index at) const {
        const int64_t i = NEURON_INDEX_VALUE(at);
#ifdef NEURON_HOST_ELEMENTS
        // The host: the same test and offset in 64 bits, fewer
        // instructions (the bound, like the stride, fits 32 bits, so an
        // index in range is below 2^32 and the sum carries into nothing),
        // against the bound as it was when the accessor was made, kept
        // here rather than read through the tensor per element.
        if (static_cast<uint64_t>(i) < bound_) {
            const uint64_t stride = N == 1 ? 1u : static_cast<uint32_t>(strides_[0]);
            return next(addr_ + static_cast<uint64_t>(i) * stride * sizeof(T), bounds_ + 1, path_);
        }
#else
        // On an inline path `bounds_` is `sizes_`, whose entries (like the
        // strides) fit 32 bits (checked when the accessor was made): the
        // bounds check is on the low word once the high word is 0, and the
        // offset cannot carry into the high word. Elsewhere the bounds are
        // 0 and every index takes the library's peel.
        if ((static_cast<uint64_t>(i) >> 32) == 0 && static_cast<uint32_t>(i) < static_cast<uint32_t>(bounds_[0])) {
            // The innermost stride is 1 on an inline path.
            const uint32_t stride = N == 1 ? 1u : static_cast<uint32_t>(strides_[0]);
            const uint32_t off = static_cast<uint32_t>(i) * stride * static_cast<uint32_t>(sizeof(T));
            return next((addr_ & ~UINT64_C(0xFFFFFFFF)) | static_cast<uint32_t>(static_cast<uint32_t>(addr_) + off), bounds_ + 1, path_);
        }
#endif
        return next(detail::index_peel(addr_, sizes_[0], strides_[0], at, sizeof(T), N), detail::kNoBounds, detail::ElementPath{path_.ctx, detail::kPathLibrary});
    }
    // Past the accessor's N dimensions: error 96 recorded, 0.
    int64_t size(size_t d) const { return d < N ? sizes_[d] : neuron_dim_out_of_range(); }
    int64_t stride(size_t d) const { return d < N ? strides_[d] : neuron_dim_out_of_range(); }
    c10::IntArrayRef sizes() const { return c10::IntArrayRef(sizes_, N); }
    c10::IntArrayRef strides() const { return c10::IntArrayRef(strides_, N); }

protected:
    // What indexing one dimension gives: the element, or the accessor of
    // the remaining dimensions.
    auto next(uint64_t a, const int64_t* bounds, const detail::ElementPath& p) const {
        if constexpr (N == 1) {
            (void)bounds;
            return ElementRef<T, ReadOnly>(a, p);
        } else {
            return TensorAccessor<T, N - 1, ReadOnly>(sizes_ + 1, strides_ + 1, bounds, a, p);
        }
    }
    const int64_t* sizes_;
    const int64_t* strides_;
    // The inline path's bounds: `sizes_`, or kNoBounds (library path).
    const int64_t* bounds_;
#ifdef NEURON_HOST_ELEMENTS
    // The host: `bounds_[0]` (0 on the library path).
    uint64_t bound_ = 0;
#endif
    uint64_t addr_;
    detail::ElementPath path_;
};

// The descriptor the library's accessor calls get: on the host a copy,
// so the accessor's address never escapes and the compiler keeps its
// path in registers across the element loop's hook calls (the escaped
// object was reloaded from the stack field by field per element).
#ifdef NEURON_HOST_ELEMENTS
#define NEURON_HOST_VIEW(v)        \
    neuron_tensor v##_copy = t_;   \
    const neuron_tensor* v = &v##_copy
#else
#define NEURON_HOST_VIEW(v) const neuron_tensor* v = &t_
#endif

// The accessor a Tensor hands out: registered with the coherency enforcer
// for its lifetime. If the tensor is refused (wrong rank/type, or a
// coherency conflict under COHERENT), ok() is false and every access is
// refused (reads give 0, writes are dropped, the error is recorded).
//
// Its sizes and strides are the tensor's own (`t`, the Tensor's
// descriptor), not this object's copy: as in libtorch, a TensorAccessor
// sliced from it (`TensorAccessor<float, 2> a = x.accessor<float, 2>();`)
// or a sub-accessor of a temporary one (`x.accessor<float, 2>()[i]`)
// stays valid while the tensor lives (its coherency registration ends
// with this object).
template <class T, size_t N, bool ReadOnly>
class Accessor : public TensorAccessor<T, N, ReadOnly> {
public:
    explicit Accessor(const neuron_tensor& t NEURON_CALLER_PARAMS_TAIL) : TensorAccessor<T, N, ReadOnly>(t.sizes, t.strides, 0, t.storage.ctx), t_(t) {
        {
            NEURON_HOST_VIEW(v);
            ok_ = neuron_accessor_check(v, N, detail::isa_dtype_of<T>(), sizeof(T)) == 0 && neuron_accessor_register(v, ACCESSOR_KIND_UNBUFFERED) == 0;
        }
        if (!ok_) NEURON_CALLER_SITE(t.storage.addr);
        if (ok_) {
            this->addr_ = t_.storage.addr;
            this->path_ = detail::element_path(t_, N, sizeof(T), !ReadOnly, &this->addr_);
            if (this->path_.kind != detail::kPathLibrary) {
                this->bounds_ = t.sizes;
#ifdef NEURON_HOST_ELEMENTS
                this->bound_ = static_cast<uint64_t>(t.sizes[0]);
#endif
            }
        }
    }
#if __cplusplus >= 201703L
    Accessor(const Accessor&) = delete;
#else
    // C++14 (--cflags -std=c++14, the vendor's level) wants a copy
    // constructor to return one by value (`auto a = t.accessor<float,
    // 2>()`), though every compiler elides that copy: declared, never
    // defined, so a real copy is still refused (at link time).
    Accessor(const Accessor&);
#endif
    Accessor& operator=(const Accessor&) = delete;
    ~Accessor() {
        if (ok_) {
            NEURON_HOST_VIEW(v);
            neuron_accessor_release(v, ACCESSOR_KIND_UNBUFFERED);
        }
    }
    bool ok() const { return ok_; }

private:
    neuron_tensor t_;
    bool ok_ = false;
};

// ---- stream accessors -----------------------------------------------------------

template <class T, uint32_t Mode>
class StreamAccessor {
public:
    explicit StreamAccessor(const neuron_tensor& t) : s_() { neuron_stream_open(&s_, &t, Mode, detail::isa_dtype_of<T>(), sizeof(T)); }
#if __cplusplus >= 201703L
    StreamAccessor(const StreamAccessor&) = delete;
#else
    // C++14 (--cflags -std=c++14, the vendor's level) wants a copy
    // constructor to return one by value (`auto a = t.accessor<float,
    // 2>()`), though every compiler elides that copy: declared, never
    // defined, so a real copy is still refused (at link time).
    StreamAccessor(const StreamAccessor&);
#endif
    StreamAccessor& operator=(const StreamAccessor&) = delete;
    ~StreamAccessor() { close(); }
    // Flushes (write streams), frees the buffer, deregisters. 0 or -1.
    int close() { return neuron_stream_close(&s_); }
    bool ok() const { return s_.open == 1; }
    bool buffered() const { return s_.slot >= 0; }

protected:
    NeuronStream s_;
};

template <class T>
class TensorReadStreamAccessor : public StreamAccessor<T, 0> {
public:
    using StreamAccessor<T, 0>::StreamAccessor;
    // The next element (T{} past the end or on error).
    T read(NEURON_CALLER_PARAMS) {
        T v{};
        if (neuron_stream_read(&this->s_, &v, sizeof(T)) != 0) NEURON_STREAM_SITE(this->s_);
        return v;
    }
};

template <class T>
class TensorWriteStreamAccessor : public StreamAccessor<T, 1> {
public:
    using StreamAccessor<T, 1>::StreamAccessor;
    // Appends v; it reaches memory at close() or the end of scope.
    void write(T v NEURON_CALLER_PARAMS_DEFAULT_TAIL) {
        if (neuron_stream_write(&this->s_, &v, sizeof(T)) != 0) NEURON_STREAM_SITE(this->s_);
    }
};

// ---- TCM accessor -----------------------------------------------------------------

// Bulk copies between the tensor (indexed as if flattened) and TCM
// memory from tcm_malloc. A const tensor's is read-only.
template <bool ReadOnly>
class TensorTcmAccessor {
public:
    explicit TensorTcmAccessor(const neuron_tensor& t) : t_(t) {}
    template <class T>
    int tensor_to_tcm(T* tcm, uint64_t tensor_offset, uint64_t num_elem NEURON_CALLER_PARAMS_DEFAULT_TAIL) const {
        const int r = neuron_tensor_to_tcm(&t_, detail::isa_dtype_of<T>(), tcm, tensor_offset, num_elem);
        if (r != 0) NEURON_CALLER_SITE(t_.storage.addr);
        return r;
    }
    template <class T>
    int tcm_to_tensor(const T* tcm, uint64_t tensor_offset, uint64_t num_elem NEURON_CALLER_PARAMS_DEFAULT_TAIL) const {
        static_assert(!ReadOnly, "tcm_to_tensor: a const tensor's TCM accessor is read-only");
        const int r = neuron_tcm_to_tensor(&t_, detail::isa_dtype_of<T>(), tcm, tensor_offset, num_elem);
        if (r != 0) NEURON_CALLER_SITE(t_.storage.addr);
        return r;
    }

private:
    neuron_tensor t_;
};

}  // namespace at
