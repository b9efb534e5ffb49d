// torchneuron/register.h: what a vendor shape file includes.
//
//   NEURON_LIBRARY(my_ops, m) {
//       m.def("relu_forward", &relu_fwd_shape, "relu_forward");
//   }
//
// declares the library's ops: the op's name, its shape function (it runs
// on the host and returns a tensor of the output's shape and dtype, e.g.
// `torch::zeros(t_in.sizes(), torch::kFloat)`) and the name of the compute
// function in the compute sources. `customop build` reads these blocks
// from the source to generate the wrappers; the block itself compiles to
// a function that records each op's shape function, which the generated
// host entry (`customop_shape_eval`) calls to evaluate one.
//
// Also here: the small glue the generated wrapper uses between the C ABI
// (neuron_tensor, NeuronScalar) and torch::Tensor / torch::Scalar.
//
// Freestanding: nothing beyond <torch/torch.h> and the compiler's
// freestanding headers (the generated kernel side includes it on the
// device too).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <torch/torch.h>

namespace torchneuron {

// ---- the shape query: filled by the runner (customop/src/shape.rs has the
// same layout), answered by eval_shape -----------------------------------

// One argument of the op, as the shape function receives it.
struct ShapeArg {
    uint8_t kind;      // argument kind: 1 tensor, 2 scalar, 3 int, 4 float, 5 long long/int64_t, 6 double
    uint8_t dtype;     // tensors: the ISA dtype code (SPEC section 6)
    uint8_t ndim;      // tensors: 1..8
    uint8_t is_float;  // values: 1 if `f` holds it, 0 if `i` does
    uint32_t reserved;
    int64_t sizes[8];  // tensors: the shape, outermost first
    int64_t i;
    double f;
};

struct ShapeQuery {
    uint32_t version;  // kShapeQueryVersion
    uint32_t nargs;
    const char* op;
    ShapeArg args[10];
    // Answer: the output's ISA dtype code, rank and shape.
    uint8_t out_dtype;
    uint8_t out_ndim;
    uint8_t reserved[6];
    int64_t out_sizes[8];
    // Why eval_shape failed (NUL-terminated).
    char message[256];
};

constexpr uint32_t kShapeQueryVersion = 1;
static_assert(sizeof(ShapeArg) == 88, "ShapeArg layout is shared with the runner");
static_assert(sizeof(ShapeQuery) == 16 + 880 + 8 + 64 + 256, "ShapeQuery layout is shared with the runner");

// eval_shape's results.
enum ShapeStatus : int32_t {
    kShapeOk = 0,
    kShapeBadQuery = 1,       // wrong version, or too many arguments
    kShapeUnknownOp = 2,      // no m.def for the op
    kShapeArgCount = 3,       // the shape function takes another number of arguments
    kShapeArgKind = 4,        // an argument's kind does not fit the shape function's parameter
    kShapeBadDtype = 5,       // an argument's dtype code is not one of the eight
    kShapeUndefined = 6,      // the shape function returned an undefined tensor
    kShapeResultDtype = 7,    // ... or one of a dtype that does not marshal
    kShapeResultRank = 8,     // ... or of rank 0 or above 8
};

namespace detail {

// Appends NUL-terminated pieces to a fixed message buffer (no printf:
// freestanding).
inline void say(char (&buf)[256], const char* a, const char* b = "", const char* c = "", const char* d = "", const char* e = "", const char* f = "") {
    size_t n = 0;
    const char* const parts[] = {a, b, c, d, e, f};
    for (const char* p : parts) {
        for (; p && *p && n + 1 < sizeof buf; ++p) buf[n++] = *p;
    }
    buf[n] = 0;
}

inline bool same(const char* a, const char* b) {
    while (*a && *a == *b) ++a, ++b;
    return *a == *b;
}

// ISA dtype codes <-> torch scalar types (the eight that marshal).
inline bool scalar_type_of(uint8_t code, c10::ScalarType* out) {
    switch (code) {
        case 2: *out = torch::kByte; return true;
        case 3: *out = torch::kChar; return true;
        case 4: *out = torch::kShort; return true;
        case 6: *out = torch::kInt; return true;
        case 7: *out = torch::kLong; return true;
        case 8: *out = torch::kHalf; return true;
        case 10: *out = torch::kBFloat16; return true;
        case 12: *out = torch::kFloat; return true;
        default: return false;
    }
}
inline uint8_t isa_code(c10::ScalarType t) {
    if (t == torch::kByte) return 2;
    if (t == torch::kChar) return 3;
    if (t == torch::kShort) return 4;
    if (t == torch::kInt) return 6;
    if (t == torch::kLong) return 7;
    if (t == torch::kHalf) return 8;
    if (t == torch::kBFloat16) return 10;
    if (t == torch::kFloat) return 12;
    return 0;
}

// The wrapper's glue between the C ABI and the torch surface.
inline torch::Tensor tensor_arg(const neuron_tensor& t) { return torch::Tensor(t); }
inline torch::Scalar scalar_arg(const NeuronScalar& s) { return torch::Scalar(s); }
inline const neuron_tensor* raw(const torch::Tensor& t) { return &t.raw(); }

// How a shape function's parameter of type T is made from a ShapeArg.
template <class T> struct ArgOf;
template <> struct ArgOf<torch::Tensor> {
    static bool fits(const ShapeArg& a) {
        c10::ScalarType st;
        return a.kind == 1 && a.ndim >= 1 && a.ndim <= 8 && scalar_type_of(a.dtype, &st);
    }
    // The shape function sees the argument's shape and dtype, not its data:
    // an empty tensor, which reads as zeros (neuron_sim_call's SoC is fresh
    // and its HBM sparse) without a fill of the whole tensor, which cost a
    // pass over it (issue 28).
    static torch::Tensor make(const ShapeArg& a) {
        c10::ScalarType st = torch::kFloat;
        scalar_type_of(a.dtype, &st);
        return torch::empty(c10::IntArrayRef(a.sizes, a.ndim), st);
    }
};
template <> struct ArgOf<torch::Scalar> {
    static bool fits(const ShapeArg& a) { return a.kind == 2; }
    static torch::Scalar make(const ShapeArg& a) { return a.is_float ? torch::Scalar(a.f) : torch::Scalar(a.i); }
};
#define TORCHNEURON_VALUE_ARG_(T, K)                                                        \
    template <> struct ArgOf<T> {                                                           \
        static bool fits(const ShapeArg& a) { return a.kind == (K); }                       \
        static T make(const ShapeArg& a) { return a.is_float ? static_cast<T>(a.f) : static_cast<T>(a.i); } \
    };
TORCHNEURON_VALUE_ARG_(int, 3)
TORCHNEURON_VALUE_ARG_(float, 4)
TORCHNEURON_VALUE_ARG_(long, 5)
TORCHNEURON_VALUE_ARG_(long long, 5)
TORCHNEURON_VALUE_ARG_(double, 6)
#undef TORCHNEURON_VALUE_ARG_

template <class T> struct Bare { using type = T; };
template <class T> struct Bare<const T> { using type = T; };
template <class T> struct Bare<T&> { using type = typename Bare<T>::type; };
template <class T> struct Bare<const T&> { using type = T; };

template <size_t... I> struct Seq {};
template <size_t N, size_t... I> struct MakeSeq : MakeSeq<N - 1, N - 1, I...> {};
template <size_t... I> struct MakeSeq<0, I...> { using type = Seq<I...>; };

inline int32_t answer(ShapeQuery* q, const torch::Tensor& r) {
    if (!r.defined()) {
        // A factory that failed gives an undefined tensor: name why.
        const int32_t e = neuron_last_error();
        say(q->message, "shape function of op `", q->op, "` returned an undefined tensor", e ? " (a factory failed: " : "",
            e ? neuron_error_message(e) : "", e ? ")" : "");
        return kShapeUndefined;
    }
    const uint8_t code = isa_code(r.scalar_type());
    if (code == 0) {
        say(q->message, "shape function of op `", q->op, "` returned a tensor of a dtype that does not marshal");
        return kShapeResultDtype;
    }
    const int64_t nd = r.dim();
    if (nd < 1 || nd > 8) {
        say(q->message, "shape function of op `", q->op, "` returned a tensor of rank 0 or above 8");
        return kShapeResultRank;
    }
    q->out_dtype = code;
    q->out_ndim = static_cast<uint8_t>(nd);
    for (int64_t d = 0; d < nd; ++d) q->out_sizes[d] = r.size(d);
    return kShapeOk;
}

template <class... A> struct Invoker {
    template <size_t... I>
    static int32_t call(torch::Tensor (*f)(A...), ShapeQuery* q, Seq<I...>) {
        const bool fits[] = {true, ArgOf<typename Bare<A>::type>::fits(q->args[I])...};
        for (size_t k = 1; k < sizeof fits; ++k) {
            if (!fits[k]) {
                // k is 1..10: the argument's 1-based position.
                const char number[3] = {k < 10 ? static_cast<char>('0' + k) : '1', k < 10 ? '\0' : '0', '\0'};
                say(q->message, "op `", q->op, "`: the shape function's parameter does not take argument ", number);
                return kShapeArgKind;
            }
        }
        return answer(q, f(ArgOf<typename Bare<A>::type>::make(q->args[I])...));
    }
    static int32_t run(void (*erased)(), ShapeQuery* q) {
        if (q->nargs != sizeof...(A)) {
            say(q->message, "op `", q->op, "`: the shape function takes another number of arguments than the compute function");
            return kShapeArgCount;
        }
        return call(reinterpret_cast<torch::Tensor (*)(A...)>(erased), q, typename MakeSeq<sizeof...(A)>::type{});
    }
};

}  // namespace detail

// What NEURON_LIBRARY's `m` is: the ops' shape functions, by op name.
class Library {
public:
    // m.def("op", &shape_fn, "compute_fn"): `customop build` reads the
    // compute name from the source; here only the shape function counts.
    template <class... A>
    Library& def(const char* op, torch::Tensor (*shape_fn)(A...), const char* compute_fn = nullptr) {
        (void)compute_fn;
        if (n_ < kMaxOps) {
            ops_[n_].name = op;
            ops_[n_].fn = reinterpret_cast<void (*)()>(shape_fn);
            ops_[n_].run = &detail::Invoker<A...>::run;
            ++n_;
        }
        return *this;
    }

    // Evaluates op q->op's shape function; 0 or a ShapeStatus.
    int32_t eval(ShapeQuery* q) const {
        for (size_t i = 0; i < n_; ++i) {
            if (detail::same(ops_[i].name, q->op)) return ops_[i].run(ops_[i].fn, q);
        }
        detail::say(q->message, "no NEURON_LIBRARY block defines op `", q->op, "`");
        return kShapeUnknownOp;
    }

private:
    static constexpr size_t kMaxOps = 10;
    struct Entry {
        const char* name;
        void (*fn)();
        int32_t (*run)(void (*)(), ShapeQuery*);
    };
    Entry ops_[kMaxOps] = {};
    size_t n_ = 0;
};

// The generated host entry's body: checks the query, evaluates.
inline int32_t eval_shape(const Library& lib, ShapeQuery* q) {
    if (!q) return kShapeBadQuery;
    q->message[0] = 0;
    if (q->version != kShapeQueryVersion || q->nargs > 10 || !q->op) {
        detail::say(q->message, "shape query of another version, or with more than 10 arguments");
        return kShapeBadQuery;
    }
    return lib.eval(q);
}

}  // namespace torchneuron

// The function a NEURON_LIBRARY block becomes (the generated host entry
// declares and calls it by this name).
#define NEURON_LIBRARY_INIT_(name) neuron_library_init_##name

#define NEURON_LIBRARY(name, m)                                   \
    void NEURON_LIBRARY_INIT_(name)(::torchneuron::Library & m); \
    void NEURON_LIBRARY_INIT_(name)(::torchneuron::Library & m)
