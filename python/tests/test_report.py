"""The run report as objects: ``str(report)`` is the simulator's text
(what ``customop run --report`` prints), and every field is read from it."""

import re

import numpy as np
import pytest


@pytest.mark.parametrize("cores", [1, 8])
def test_a_kernel_that_prints_has_its_lines_in_the_report(built, cores):
    x = np.array([1.5, -2.0, 4.0], dtype=np.float32)
    y, rep = built("printing_cores", multicore=True).say(x, 7, cores=cores, report=True)
    np.testing.assert_array_equal(y, x)
    assert rep.ok and len(rep.cores) == cores
    for i, core in enumerate(rep.cores):
        assert core.cpu == i
        assert core.printf == [f"core {i} says tag 7, first 1.50"]
        assert core.printf_lost == 0
    assert rep.printf == [f"core {i} says tag 7, first 1.50" for i in range(cores)]
    assert f"    core {cores - 1} says tag 7, first 1.50\n" in str(rep)
    # The device keeps core 0's printf only: the others are marked, and warned of.
    assert [c.printf_not_kept for c in rep.cores] == [False] + [True] * (cores - 1)
    assert [w for w in rep.warnings if "keeps core 0's printf output only" in w] == ([] if cores == 1 else [rep.warnings[0]])
    assert all(0 < c.kernel_stack <= c.stack_on_device == 8192 for c in rep.cores)


def test_the_fields_are_the_numbers_of_the_text(built):
    x = np.random.default_rng(3).uniform(-1, 1, (40, 50)).astype(np.float32)
    _, rep = built("relu2d_mc", multicore=True).relu_forward(x, cores=8, report=True)
    text = str(rep)
    assert text.startswith("run: 8 core(s), ok\n") and rep.text == text
    assert rep.ok and rep.guard_errors == [] and rep.refused is None
    dma = [tuple(map(int, m)) for m in re.findall(r"DMA: (\d+) bytes in \(HBM -> data RAM\), (\d+) bytes out", text)]
    stacks = [int(s) for s in re.findall(r"stack (\d+) B", text)]
    hits = [[int(v) for v in h.split(", ")] for h in re.findall(r"hits \[([\d, ]+)\]", text)]
    assert len(dma) == len(stacks) == len(hits) == 8
    for core, (din, dout), stack, h in zip(rep.cores, dma, stacks, hits):
        assert (core.dma_in, core.dma_out, core.stack_high_water, core.translate_hits) == (din, dout, stack, h)
        assert core.returned == core.status == core.last_error == 0
        assert len(core.translate_hits) == 5 and len(core.translate_misses) == 3
        # In place (get_dst_tensor()): no output allocated on the HBM heap.
        assert core.dma_in > 0 and core.stack_high_water > 0 and core.hbm_heap_high_water == 0
        assert core.thrash_warning is None and core.printf == []


def test_without_report_the_call_returns_the_array_alone(built):
    y = built("relu2d").relu_forward(np.ones((2, 2), np.float32))
    assert isinstance(y, np.ndarray)
    y, rep = built("relu2d").relu_forward(np.ones((2, 2), np.float32), report=True)
    assert isinstance(y, np.ndarray) and "core 0:" in str(rep)


def test_the_errors_of_a_core_are_listed_in_order_with_the_handled_ones_marked(built):
    x = np.array([1.0, -2.0], dtype=np.float32)
    y, rep = built("probing").probe(x, report=True)
    np.testing.assert_array_equal(y, x)
    assert rep.ok and rep.verdict is None and rep.unwritten is None and rep.overlaps == []
    (core,) = rep.cores
    assert core.errors and all(handled for _, _, handled in core.errors), core.errors
    code, message, _ = core.errors[0]
    # Its line names the pool and the size asked for, then marks it handled.
    line = next(l for l in str(rep).splitlines() if l.startswith(f"    {code} ({message})"))
    assert line.endswith(" (handled)") and ", where: the tcm_malloc pool: 1048576 bytes asked for" in line, line


def test_a_notebook_shows_the_report_as_one_self_contained_page(built):
    x = np.array([1.5, -2.0, 4.0], dtype=np.float32)
    _, rep = built("printing_cores", multicore=True).say(x, 7, cores=8, report=True)
    page = rep._repr_html_()
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>\n")
    assert "src=" not in page and "href=" not in page
    assert "run: 8 core(s), ok" in page and "translate hits" in page
    # One row per core, each core's printf folded away, escaped.
    assert page.count("<details class=\"printf\">") == 8
    assert "core 7 says tag 7, first 1.50" in page
    # report=True kept who wrote the output: the page draws it.
    assert "No output map" not in page and '<rect class="c' in page


def test_the_notebook_page_maps_each_element_to_the_core_that_wrote_it(built):
    import re

    x = np.arange(64, dtype=np.float32)
    _, rep = built("report_page", multicore=True).double_parts(x, cores=8, report=True)
    squares = re.findall(r'<rect class="([a-z0-9]+)"', rep._repr_html_())
    # 64 squares, one per element, eight per core, in order.
    assert squares == [f"c{i // 8}" for i in range(64)], squares
    # Without report=True nothing is kept (the run costs no copy of it).
    y = built("report_page", multicore=True).double_parts(x, cores=8)
    np.testing.assert_array_equal(y, x * 2)
