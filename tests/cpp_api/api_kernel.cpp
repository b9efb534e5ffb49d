// Exercises the rest of neuroncustomop.hpp in one kernel per feature:
// streams (a 5th falls back), coherency policies, the tensor ops with
// FP16/BF16 element types, 2-D accessor indexing, neuron_printf.
#include "neuroncustomop.hpp"

using neuron::Tensor;

// out = 2 * (sum of 5 read streams over a) / 5 ... i.e. 2a, through a
// write stream; FP32.
Tensor streams(const Tensor& a) {
    Tensor out = neuron::get_dst_tensor();
    auto r0 = a.read_stream_accessor<float>();
    auto r1 = a.read_stream_accessor<float>();
    auto r2 = a.read_stream_accessor<float>();
    auto r3 = a.read_stream_accessor<float>();
    auto r4 = a.read_stream_accessor<float>();
    neuron_printf("buffered %d%d%d%d%d", r0.buffered(), r1.buffered(), r2.buffered(), r3.buffered(), r4.buffered());
    r4.close();
    r3.close();
    auto w = out.write_stream_accessor<float>();
    for (int64_t i = 0; i < a.numel(); i++) {
        w.write(r0.read() + r1.read());
        r2.read();
    }
    return out;  // w flushes at end of scope, before the return copies nothing
}

// Coherency under the policy given: a write stream, then an accessor.
Tensor coherency(const Tensor& t, int policy) {
    Tensor out = neuron::get_dst_tensor();
    t.set_accessor_coherence_policy(policy);
    {
        // A write stream needs a non-const tensor (the vendor's has only
        // that overload): a copy of the handle, the same storage.
        Tensor tw = t;
        auto w = tw.write_stream_accessor<int32_t>();
        auto a = t.accessor<int32_t, 1>();
        neuron_printf("policy %d accessor %s", t.get_accessor_coherence_policy(), a.ok() ? "admitted" : "refused");
        // Refused under COHERENT, as expected: handled, so it does not
        // fail the run.
        if (!a.ok()) neuron_clear_error();
    }
    auto a = out.accessor<int32_t, 1>();
    neuron_printf("after close %s", a.ok() ? "admitted" : "refused");
    for (int64_t i = 0; i < out.numel(); ++i) a[i] = 42;
    return out;
}

// out = clamp(exp(x) + 2 * x, -1, 8) in FP16, with allocating forms,
// checked element-wise on the host; the BF16 conversions round-trip.
Tensor half_ops(const Tensor& x) {
    Tensor e = neuron::exp(x);
    Tensor s = neuron::add(e, x, 2);
    Tensor c = neuron::clamp(s, -1, 8);
    const float bf = neuron::BFloat16(1.5f);
    const float hf = neuron::Half(0.333333f);
    neuron_printf("bf16 %.4f fp16 %.4f defined %d", bf, hf, c.defined());
    return c;
}

// out[i][j] = x[i][j] * 10 + i - j through 2-D accessors (INT64).
Tensor grid(const Tensor& x) {
    Tensor out = neuron::get_dst_tensor();
    {
        auto in = x.accessor<int64_t, 2>();
        auto o = out.accessor<int64_t, 2>();
        for (int64_t i = 0; i < x.size(0); i++)
            for (int64_t j = 0; j < x.size(1); j++) o[i][j] = static_cast<int64_t>(in[i][j]) * 10 + i - j;
        const int64_t oob = in[x.size(0)][0];
        neuron_printf("oob %lld err %d", static_cast<long long>(oob), neuron_last_error());
        neuron_clear_error();  // the out-of-bounds read was the point: handled
    }
    return out;
}

NEURON_CUSTOM_OPS(streams, coherency, half_ops, grid)
