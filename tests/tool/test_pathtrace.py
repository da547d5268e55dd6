"""tern.pathtrace: per-interrupt instruction counts of one core, from synthetic QEMU traces."""

from collections import Counter

import pytest

from tern.errors import ToolError
from tern.pathtrace import (Points, Sample, SwitchParser, Switches, between, group, parse,
                            parse_switches, summary,
                            switch_summary, symbols_of)

VIRT_READ, PHYS_READ = 0x40082284, 0x40082A84
HYP_WFI = 0x40080FB4
PTS = Points({VIRT_READ: "virt", PHYS_READ: "phys"}, frozenset({HYP_WFI}))
EL1_FLAGS, EL2_FLAGS = 0x121, 0x61


def run(pc, el=1, cpu=1):
    flags = EL2_FLAGS if el == 2 else EL1_FLAGS
    return f"Trace {cpu}: 0x7f0000001000 [0000000000004000/{pc:016x}/{flags:08x}/ff020201] "


def taking(kind, elr, src=1, dst=1, cpu=1, number=5):
    return [f"Taking exception {number} [{kind}] on CPU {cpu}", f"...from EL{src} to EL{dst}",
            "...with ESR 0x0/0x38c0000", f"...with ELR 0x{elr:x}",
            f"...to EL{dst} PC 0x40080c80 PSTATE 0x3c9"]


def eret(src=2, dst=1, pc=0x1000):
    return [f"Exception return from AArch64 EL{src} to AArch64 EL{dst} PC 0x{pc:x}"]


def vector(read=VIRT_READ):
    return [run(read - 4), run(read)]


def test_direct_interrupt_counts_the_vector_only_and_drops_the_entry_not_executed():
    lines = [run(0x1000), run(0x1004),            # 0x1004 entered, then the IRQ is taken first
             *taking("IRQ", elr=0x1004), *vector()]
    assert parse(lines, 1, PTS) == [Sample("virt", 0, 2, Counter({"IRQ": 1}))]


def test_trap_and_inject_counts_hypervisor_instructions_up_to_eret():
    lines = [run(0x1000), *taking("IRQ", elr=0x1004, dst=2),
             run(0x40080C80, 2), run(0x40080C84, 2), run(0x40080C84, 2),   # a turn ended: twice
             run(0x40080C88, 2), *eret(pc=0x1004),
             run(0x1004), *taking("Virtual IRQ", elr=0x1004, number=14), *vector(PHYS_READ)]
    [sample] = parse(lines, 1, PTS)
    assert (sample.counter, sample.hyp, sample.vector) == ("phys", 3, 2)
    assert sample.exceptions == Counter({"IRQ": 1, "Virtual IRQ": 1})


def test_trapped_wfi_counts_from_the_hypervisor_wfi_wake_up():
    lines = [run(0x3000), *taking("Undefined Instruction", elr=0x3000, dst=2, number=1),
             run(0x40080F00, 2), run(0x40080F04, 2), run(HYP_WFI, 2),
             run(0x40080FB8, 2), run(0x40080C88, 2), run(0x40080C8C, 2), *eret(pc=0x3004),
             run(0x3004), *taking("Virtual IRQ", elr=0x3004, number=14), *vector()]
    [sample] = parse(lines, 1, PTS)
    assert sample.hyp == 3
    assert sample.exceptions == Counter({"Undefined Instruction": 1, "Virtual IRQ": 1})


def test_a_delivery_before_the_guest_waits_still_counts_hypervisor_and_vector_only():
    """The interrupt arrives while the guest runs with IRQs masked: its own instructions
    between the eret and the virtual IRQ are not part of the path."""
    lines = [run(0x1000), *taking("IRQ", elr=0x1004, dst=2),
             run(0x40080C80, 2), run(0x40080C84, 2), *eret(pc=0x1004),
             run(0x1004), run(0x1008), run(0x100C), run(0x1010),
             *taking("Virtual IRQ", elr=0x1010, number=14), *vector()]
    [sample] = parse(lines, 1, PTS)
    assert (sample.hyp, sample.vector) == (2, 2)


def test_other_cores_lines_are_ignored():
    lines = [run(0x1000), run(0x40080C80, 2, cpu=2), *taking("IRQ", elr=0x5000, cpu=2, dst=2),
             run(0x40080C84, 2, cpu=2), *eret(pc=0x5000),      # cpu 2's eret, no CPU named
             run(0x1004), *taking("IRQ", elr=0x1008), *vector()]
    assert parse(lines, 1, PTS) == [Sample("virt", 0, 2, Counter({"IRQ": 1}))]


def test_exceptions_between_samples_are_counted_with_the_next_one():
    lines = [*taking("IRQ", elr=0x1000), *vector(),
             run(0x2000), *taking("Data Abort", elr=0x2000, dst=2, number=4),
             run(0x40081000, 2), *eret(pc=0x2004),
             run(0x2004), *taking("IRQ", elr=0x2008), *vector()]
    first, second = parse(lines, 1, PTS)
    assert first.exceptions == Counter({"IRQ": 1})
    assert second.exceptions == Counter({"Data Abort": 1, "IRQ": 1})
    assert second.hyp == 0      # the data abort's handling did not deliver the interrupt


def test_a_counter_read_outside_an_interrupt_is_not_a_sample():
    assert parse([run(0x1000), run(VIRT_READ), run(0x1008)], 1, PTS) == []


def samples(counter, n, hyp=0):
    return [Sample(counter, hyp, 2) for _ in range(n)]


def test_group_splits_back_to_back_tests_of_one_counter_from_the_end():
    got = group([Sample("virt", 99, 2)] + samples("virt", 3, 1) + samples("virt", 3, 2)
                + samples("phys", 6, 3),
                ("vtimer-wfi", "vtimer-busy", "ptimer-wfi", "ptimer-busy"), 3)
    assert [s.hyp for s in got["vtimer-wfi"]] == [1, 1, 1]     # the start-delay sample dropped
    assert [s.hyp for s in got["vtimer-busy"]] == [2, 2, 2]
    assert len(got["ptimer-wfi"]) == len(got["ptimer-busy"]) == 3


def test_group_refuses_a_trace_that_started_late():
    with pytest.raises(ToolError, match="start late"):
        group(samples("virt", 4) + samples("phys", 6), ("vtimer-wfi", "vtimer-busy",
                                                        "ptimer-wfi", "ptimer-busy"), 3)


def test_group_refuses_missing_tests():
    with pytest.raises(ToolError, match="no samples for ptimer"):
        group(samples("virt", 6), ("vtimer-wfi", "vtimer-busy", "ptimer-wfi"), 3)


def test_summary_leaves_out_the_warm_up():
    ss = [Sample("virt", 50, 9, Counter({"IRQ": 1}))] + \
         [Sample("virt", 16, 2, Counter({"IRQ": 1, "Virtual IRQ": 1})) for _ in range(3)]
    got = summary(ss, 1)
    assert (got["hyp_min"], got["hyp_max"], got["vector_max"], got["warm"]) == (16, 16, 2, 3)
    assert got["exceptions"] == {"IRQ": 3, "Virtual IRQ": 3}


# ---- parse_switches: guest-to-guest switches on a shared core ----

HYP_ENTRY, HYP_SAVE, HYP_OTHER, HYP_END = 0x40080000, 0x40081000, 0x40082000, 0x40083000
SYMS = symbols_of([(HYP_ENTRY, "vectors"), (HYP_SAVE, "arch_vcpu_save"),
                   (HYP_OTHER, "handle_irq"), (HYP_END, "panic")], "arch_vcpu_save")


def el2(*pcs, cpu=1):
    return [run(pc, 2, cpu) for pc in pcs]


def irq_path(cpu, switch, kind="IRQ", elr=0x1004):
    """An interrupt from EL1 on `cpu` and its EL2 path: 4 instructions, 2 of them in the
    marker if `switch`, then the eret to EL1."""
    middle = (HYP_SAVE, HYP_SAVE + 4) if switch else (HYP_OTHER, HYP_OTHER + 4)
    return ([run(elr - 4, 1, cpu), run(elr, 1, cpu)]
            + taking(kind, elr=elr, dst=2, cpu=cpu)
            + el2(HYP_ENTRY, *middle, HYP_ENTRY + 4, cpu=cpu) + eret())


def test_switch_counts_el2_instructions_from_interrupt_to_eret():
    lines = irq_path(1, True) + irq_path(1, False) + irq_path(1, True, kind="FIQ")
    out = parse_switches(lines, SYMS)
    assert out[1].counts == [4, 4]
    assert out[1].others == 1
    assert out[1].functions[0] == Counter({"vectors": 2, "arch_vcpu_save": 2})


def test_interleaved_cpus_attribute_unnumbered_lines_to_the_last_traced_cpu():
    a, b = irq_path(0, False), irq_path(1, True)
    # Core 1 takes its interrupt, then core 0 runs its whole path (its eret has no CPU number:
    # it follows core 0's own eret instruction), then core 1 finishes.
    lines = b[:8] + a + b[8:]
    out = parse_switches(lines, SYMS)
    assert (out[0].counts, out[0].others) == ([], 1)
    assert (out[1].counts, out[1].others) == ([4], 0)


def test_nested_el2_interrupt_is_counted_in_the_path():
    lines = ([run(0x1000)] + taking("IRQ", elr=0x1004, dst=2)
             + el2(HYP_ENTRY, HYP_SAVE)
             + el2(HYP_SAVE + 4)                 # entered, but the nested IRQ comes first
             + taking("IRQ", elr=HYP_SAVE + 4, src=2, dst=2)
             + el2(HYP_ENTRY, HYP_OTHER) + eret(2, 2, HYP_SAVE + 4)
             + el2(HYP_SAVE + 4, HYP_ENTRY + 4) + eret())
    out = parse_switches(lines, SYMS)
    assert out[1].counts == [6]
    assert out[1].functions[0] == Counter({"vectors": 3, "arch_vcpu_save": 2, "handle_irq": 1})


def test_block_logged_twice_counts_once_and_sync_traps_start_no_path():
    lines = ([run(0x1000)] + taking("IRQ", elr=0x1004, dst=2)
             + el2(HYP_ENTRY, HYP_SAVE, HYP_SAVE, HYP_ENTRY + 4) + eret()
             + [run(0x2000)] + taking("Hypervisor Call", elr=0x2004, dst=2, number=11)
             + el2(HYP_SAVE, HYP_ENTRY) + eret())
    out = parse_switches(iter(lines), SYMS)
    assert (out[1].counts, out[1].others) == ([3], 0)


def test_switch_summary_gives_the_median_switch_functions():
    sw = Switches([10, 30, 20], [Counter({"a": 10}), Counter({"c": 30}),
                                 Counter({"b": 15, "a": 5})], others=2)
    s = switch_summary(sw)
    assert (s["n"], s["min"], s["avg"], s["max"], s["median"], s["others"]) == \
        (3, 10, 20, 30, 20, 2)
    assert s["functions"] == [["b", 15], ["a", 5]]
    assert switch_summary(Switches(others=1)) == {"n": 0, "others": 1}


def test_symbols_of_needs_the_marker():
    with pytest.raises(ToolError, match="no function missing"):
        symbols_of([(HYP_ENTRY, "vectors")], "missing")


def test_switches_between_marks_taken_as_the_parser_goes():
    parser = SwitchParser(SYMS)
    marks = []
    for path in (irq_path(1, True), irq_path(1, False), irq_path(1, True), irq_path(1, True)):
        marks.append((len(parser.cores.get(1, Switches()).counts),
                      parser.cores.get(1, Switches()).others))
        for line in path:
            parser.feed(line)
    out = parser.finish()
    # From before the second path to before the fourth: one other path, one switch.
    part = between(out[1], marks[1], marks[3])
    assert (part.counts, part.others) == ([4], 1)
