// Drives row_sum.cpp through the simulator's C API: places an INT32 matrix
// in mock HBM, runs the op on 1 core and the SPMD op on 8 cores, and checks
// the row sums against a reference computed here.
#include "sim_check.h"

namespace {

void run_case(const char* op, uint32_t cores, uint64_t rows, uint64_t cols) {
    std::vector<int32_t> x(rows * cols), out(rows, 0x5a5a5a5a);
    Lcg g{rows * 131 + cols + cores};
    for (auto& v : x) v = static_cast<int32_t>(g.next() % 20001) - 10000;
    // A few extremes, so int32 wrap-around is exercised.
    x[0] = INT32_MAX;
    x[1 % x.size()] = INT32_MAX;
    std::vector<int32_t> want(rows);
    for (uint64_t r = 0; r < rows; ++r) {
        int64_t acc = 0;
        for (uint64_t c = 0; c < cols; ++c) acc += x[r * cols + c];
        want[r] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(acc)));
    }
    NeuronSim* sim = new_sim(2);
    const uint64_t in_shape[2] = {rows, cols};
    const uint64_t out_shape[1] = {rows};
    CHECK(neuron_sim_arg_tensor(sim, DTYPE_INT32, in_shape, 2, x.data(), x.size() * 4) == 0, "arg x");
    CHECK(neuron_sim_set_output(sim, DTYPE_INT32, out_shape, 1) == 0, "output");
    const int rc = neuron_sim_run(sim, op, cores);
    CHECK(rc == 0, "%s on %u cores: %s", op, cores, describe(rc).c_str());
    CHECK(neuron_sim_read_output(sim, out.data(), rows * 4) == 0, "read output");
    for (uint64_t r = 0; r < rows; ++r) {
        CHECK(out[r] == want[r], "%s on %u cores, [%llu, %llu]: row %llu is %d, want %d", op, cores,
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols),
              static_cast<unsigned long long>(r), out[r], want[r]);
    }
    neuron_sim_free(sim);
    printf("ok: %s on %u core(s), [%llu, %llu] (rows %% 8 = %llu)\n", op, cores, static_cast<unsigned long long>(rows),
           static_cast<unsigned long long>(cols), static_cast<unsigned long long>(rows % 8));
}

}  // namespace

int main(int argc, char** argv) {
    check_registration({"row_sum", "row_sum_mc"});
    run_case("row_sum", 1, 301, 13);
    run_case("row_sum_mc", 8, 301, 13);
    run_case("row_sum_mc", 8, 3, 1000);  // fewer rows than cores
    run_case("row_sum", 1, 1, 1);
    // Larger than one 16 MiB dynamic window: translation must move windows
    // while the kernel runs (and the kernel holds no pointer across it).
    if (argc > 1 && std::string(argv[1]) == "--big") {
        run_case("row_sum_mc", 8, 1029, 4099);
    }
    return 0;
}
