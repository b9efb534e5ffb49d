# Counts the x86-64 instructions of one warm call of
# `stream_open_read_close` (bench/examples/stream_fixed_cost.rs) by part,
# from a gdb instruction recording (no hardware counters needed):
#   cargo build --release -p neuron-bench --example stream_fixed_cost
#   gdb -q -batch -x perf/host_insns.gdb target/release/examples/stream_fixed_cost
# Each instruction is charged to the innermost function on its (inline
# included) stack that names a part below; the rest is the wrapper's.
set pagination off
set confirm off
break stream_fixed_cost::stream_open_read_close
run 3
continue
continue
record full
finish
python
import collections, re
log = gdb.execute("info record", to_string=True)
recorded = int(re.search(r"Log contains (\d+) instructions", log).group(1))
gdb.execute("record goto begin", to_string=True)
PARTS = [
    ("the 4-byte copy (glibc memcpy)", r"__mem(cpy|move)"),
    ("coherency registration and release", r"accessor_register|accessor_release|CoherencyTable|CoherencyEnforcer"),
    ("pool buffer: take, locate, give back", r"StreamPool|stream_buffer"),
    ("the runtime's close (its own steps)", r"stream_close"),
    ("the runtime's attach (its own steps)", r"stream_attach"),
    ("stream state and leaf construction", r"StreamState::new|with_grant|Leaf::new"),
    ("window check: leaf fill, cached check", r"open_token|slot_range|range_in|TranslationCtx::lookup|Leaf::refill|Leaf::cached|token_hit|slot_hit"),
    ("entry points: binding, guard, panic catch, bookkeeping", r"with_core|enter_slot|catch_panic|host_panic|CURRENT|call_once"),
    ("bulk read: position, count, checks", r"read_into|buffered_run"),
]
def names(frame):
    out = []
    f = frame
    while f is not None:
        n = f.name() or ""
        if "stream_open_read_close" in n and "{" not in n:
            break
        out.append(n)
        f = f.older()
    return out
counts = collections.Counter()
total = 0
for _ in range(recorded):
    f = gdb.selected_frame()
    part = "the wrapper, Result moves, the bench's unwraps"
    for n in names(f):
        hit = next((p for p, rx in PARTS if re.search(rx, n)), None)
        if hit:
            part = hit
            break
    counts[part] += 1
    total += 1
    gdb.execute("stepi", to_string=True)
for p, c in counts.most_common():
    print("%5d  %s" % (c, p))
print("%5d  total" % total)
end
quit
