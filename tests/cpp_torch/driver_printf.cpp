// Runs printf_stdio_first.cpp's op (which also calls printf_no_stdio.cpp's
// code) and checks that its printf lines are in the simulator's report,
// each exactly as glibc's snprintf formats it.
#include "../cpp/sim_check.h"

#include <string>
#include <vector>

int main() {
    NeuronSim* sim = new_sim(1);
    std::vector<float> t{-2.5f, 1.0f, 3.0f};
    const uint64_t shape[1] = {3};
    const int64_t tag = -9000000000LL;
    CHECK(neuron_sim_arg_tensor(sim, DTYPE_FP32, shape, 1, t.data(), t.size() * 4) == 0, "arg");
    CHECK(neuron_sim_arg_value(sim, 5, DTYPE_INT64, &tag) == 0, "tag");
    CHECK(neuron_sim_set_output(sim, DTYPE_FP32, shape, 1) == 0, "output");
    const int rc = neuron_sim_run(sim, "say", 1);
    CHECK(rc == 0, "say: %s", describe(rc).c_str());
    const std::string report = neuron_sim_report(sim);
    char line[5][256];
    snprintf(line[0], sizeof line[0], "    core %d of %u: %zu elements, first %.3f, tag %lld, %s\n", 0, 8u, static_cast<size_t>(3), -2.5,
             static_cast<long long>(tag), "end");
    snprintf(line[1], sizeof line[1], "    %-6s|%+.2e|%08.3f|%#x|%5.1f%%\n", "left", -0.000123, 3.14159, 48879u, 99.5);
    snprintf(line[2], sizeof line[2], "    neuron_printf %d %s\n", 7, "still works");
    snprintf(line[3], sizeof line[3], "    no stdio, no arguments\n");
    snprintf(line[4], sizeof line[4], "    no stdio, value %lld\n", static_cast<long long>(tag));
    for (const char* l : line) CHECK(report.find(l) != std::string::npos, "line [%s] missing from the report:\n%s", l, report.c_str());
    std::vector<float> out(3);
    CHECK(neuron_sim_read_output(sim, out.data(), 12) == 0, "read");
    CHECK(out[0] == 2.5f && out[1] == 1.0f && out[2] == 3.0f, "abs");
    neuron_sim_free(sim);
    printf("ok: printf with <stdio.h> first reaches the ring\n");
    return 0;
}
