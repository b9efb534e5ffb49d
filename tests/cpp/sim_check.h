// Helpers the C++ test drivers share: failing checks, and the simulator
// steps every driver repeats. A driver exits non-zero on the first failure.
#pragma once

#include "neuroncustomop.h"

#include <stdio.h>
#include <stdlib.h>

#include <string>
#include <vector>

// The ABI structs as C++ sees them must be the Rust layouts (docs/abi.md).
static_assert(sizeof(Q7PtrType) == 16, "Q7PtrType is 16 bytes");
static_assert(sizeof(neuron_translation_ctx) == 168, "the translation context is 168 bytes");
static_assert(sizeof(neuron_tensor) == 168, "neuron_tensor is 168 bytes");
static_assert(sizeof(NeuronScalar) == 24, "NeuronScalar is 24 bytes");
static_assert(sizeof(neuron_entry_block) == 40, "the entry block is 40 bytes");

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fprintf(stderr, "\n");                                              \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

// The simulator's return codes are 0 or an error code; this names it.
inline std::string describe(int code) {
    return std::to_string(code) + " (" + neuron_error_message(code) + ")";
}

// A new simulator with the linked kernel's ops registered.
inline NeuronSim* new_sim(int expected_ops) {
    NeuronSim* s = neuron_sim_new();
    CHECK(s != nullptr, "neuron_sim_new");
    const int n = neuron_sim_register(s);
    CHECK(n == expected_ops, "neuron_sim_register returned %d", n);
    return s;
}

// register_funcs walks the kernel's generated table as the loader does.
struct Registered {
    std::vector<std::string> names;
    std::vector<OpFn> fns;
};

inline int32_t collect_op(void* handle, const char* name, OpFn f) {
    auto* r = static_cast<Registered*>(handle);
    r->names.push_back(name);
    r->fns.push_back(f);
    return 0;
}

inline void check_registration(const std::vector<std::string>& expected) {
    Registered r;
    const int n = register_funcs(&r, collect_op);
    CHECK(n == static_cast<int>(expected.size()), "register_funcs returned %d", n);
    CHECK(r.names == expected, "op names differ");
    for (OpFn f : r.fns) {
        CHECK(f != nullptr, "null launcher");
    }
}

// Simple deterministic generator (the reference must not depend on the
// runtime under test).
struct Lcg {
    uint64_t s;
    uint32_t next() {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<uint32_t>(s >> 33);
    }
};
