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
	TEST(test_config_rejects_device_errors) \
	TEST(test_config_refuses_devices_off_the_allow_list) \
	TEST(test_config_dma_needs_the_iommu) \
	TEST(test_config_checks_board_ram) \
	TEST(test_config_checks_restart_policy) \
	TEST(test_printf_formats) \
	TEST(test_printf_truncates) \
	TEST(test_vpl011_lines_are_tagged) \
	TEST(test_vpl011_long_line_is_split) \
	TEST(test_vpl011_registers) \
	TEST(test_console_line_without_prefix)

#define TEST(name) void name(void);
TEST_LIST
#undef TEST

#endif
