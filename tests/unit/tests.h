/* SPDX-License-Identifier: MIT */
#ifndef TERN_TESTS_H
#define TERN_TESTS_H

#define TEST_LIST \
	TEST(test_virq_queue_orders_by_priority_then_intid) \
	TEST(test_virq_queue_push_is_idempotent) \
	TEST(test_virq_queue_remove) \
	TEST(test_virq_queue_bounds) \
	TEST(test_config_accepts_valid) \
	TEST(test_config_rejects_bad_header) \
	TEST(test_config_rejects_core_conflicts) \
	TEST(test_config_rejects_memory_errors) \
	TEST(test_config_checks_flags) \
	TEST(test_config_rejects_bad_names) \
	TEST(test_config_rejects_pristine_inside_partition) \
	TEST(test_config_checks_initrd) \
	TEST(test_config_accepts_devices) \
	TEST(test_config_refuses_devices_off_the_allow_list) \
	TEST(test_config_dma_needs_the_iommu) \
	TEST(test_config_checks_board_ram) \
	TEST(test_config_checks_restart_policy) \
	TEST(test_config_rejects_device_errors) \
	TEST(test_printf_formats) \
	TEST(test_printf_truncates) \
	TEST(test_vpl011_lines_are_tagged) \
	TEST(test_vpl011_long_line_is_split) \
	TEST(test_vpl011_registers) \
	TEST(test_console_line_without_prefix) \
	TEST(test_power_cpu_on) \
	TEST(test_power_cpu_on_only_while_running) \
	TEST(test_power_enter) \
	TEST(test_power_cpu_off) \
	TEST(test_power_cpu_off_with_one_pending) \
	TEST(test_power_race_two_cpu_offs) \
	TEST(test_power_race_three_cpu_offs) \
	TEST(test_power_race_cpu_on_and_end) \
	TEST(test_power_begin_end_once) \
	TEST(test_power_end_and_restart) \
	TEST(test_power_others_off) \
	TEST(test_power_threads) \
	TEST(test_partition_boot) \
	TEST(test_partition_console_core_choice) \
	TEST(test_partition_console_core_all_direct) \
	TEST(test_partition_boot_errors) \
	TEST(test_partition_boot_core_fails) \
	TEST(test_partition_uart_region) \
	TEST(test_partition_fault_stops) \
	TEST(test_partition_last_end_turns_board_off) \
	TEST(test_partition_fault_restarts) \
	TEST(test_partition_fault_while_ending) \
	TEST(test_partition_restart_limit) \
	TEST(test_partition_system_reset) \
	TEST(test_partition_system_reset_from_vcpu1) \
	TEST(test_partition_restart_needs_pristine) \
	TEST(test_partition_backoff) \
	TEST(test_partition_backoff_ticks) \
	TEST(test_partition_operator_requests) \
	TEST(test_partition_requests_during_backoff) \
	TEST(test_partition_request_while_ending) \
	TEST(test_partition_cpu_on_off) \
	TEST(test_partition_two_cpu_offs_0_first) \
	TEST(test_partition_two_cpu_offs_1_first) \
	TEST(test_partition_cpu_on_races_end) \
	TEST(test_partition_console_core_drains) \
	TEST(test_partition_console_core_is_started)

#define TEST(name) void name(void);
TEST_LIST
#undef TEST

#endif
