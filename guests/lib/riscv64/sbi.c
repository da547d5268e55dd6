#include "sbi.h"

#include "riscv.h"

static unsigned long spec_version;
static long impl_id, impl_version;
static bool have_time, have_ipi, have_hsm, have_srst;

struct sbiret sbi_call(unsigned long ext, unsigned long fid, unsigned long a0,
		       unsigned long a1, unsigned long a2)
{
	register unsigned long r0 __asm__("a0") = a0;
	register unsigned long r1 __asm__("a1") = a1;
	register unsigned long r2 __asm__("a2") = a2;
	register unsigned long r6 __asm__("a6") = fid;
	register unsigned long r7 __asm__("a7") = ext;

	/* The SBI preserves every register but a0 and a1. */
	__asm__ volatile("ecall" : "+r"(r0), "+r"(r1) : "r"(r2), "r"(r6), "r"(r7) : "memory");
	return (struct sbiret){ .error = (long)r0, .value = (long)r1 };
}

static bool probe(unsigned long ext)
{
	struct sbiret r = sbi_call(SBI_EXT_BASE, 3, ext, 0, 0);
	return r.error == SBI_SUCCESS && r.value != 0;
}

void sbi_init(void)
{
	struct sbiret r = sbi_call(SBI_EXT_BASE, 0, 0, 0, 0);

	/* An SBI 0.1 firmware has no base extension: nothing below is there. */
	if (r.error != SBI_SUCCESS)
		return;
	spec_version = (unsigned long)r.value;
	impl_id = sbi_call(SBI_EXT_BASE, 1, 0, 0, 0).value;
	impl_version = sbi_call(SBI_EXT_BASE, 2, 0, 0, 0).value;
	have_time = probe(SBI_EXT_TIME);
	have_ipi = probe(SBI_EXT_IPI);
	have_hsm = probe(SBI_EXT_HSM);
	have_srst = probe(SBI_EXT_SRST);
}

unsigned long sbi_spec_version(void) { return spec_version; }
long sbi_impl_id(void) { return impl_id; }
long sbi_impl_version(void) { return impl_version; }
bool sbi_has_time(void) { return have_time; }
bool sbi_has_ipi(void) { return have_ipi; }
bool sbi_has_hsm(void) { return have_hsm; }

long sbi_set_timer(uint64_t deadline)
{
	if (!have_time)
		return SBI_ERR_NOT_SUPPORTED;
	return sbi_call(SBI_EXT_TIME, 0, deadline, 0, 0).error;
}

long sbi_send_ipi_one(unsigned hart)
{
	if (!have_ipi)
		return SBI_ERR_NOT_SUPPORTED;
	/* hart_mask bit 0 with hart_mask_base = the hart. */
	return sbi_call(SBI_EXT_IPI, 0, 1, hart, 0).error;
}

long sbi_hart_start(unsigned hart, uintptr_t entry, unsigned long opaque)
{
	if (!have_hsm)
		return SBI_ERR_NOT_SUPPORTED;
	return sbi_call(SBI_EXT_HSM, 0, hart, entry, opaque).error;
}

long sbi_hart_status(unsigned hart)
{
	if (!have_hsm)
		return SBI_ERR_NOT_SUPPORTED;
	struct sbiret r = sbi_call(SBI_EXT_HSM, 2, hart, 0, 0);
	return r.error != SBI_SUCCESS ? r.error : r.value;
}

void sbi_shutdown(void)
{
	if (have_srst)
		sbi_call(SBI_EXT_SRST, 0, 0, 0, 0);     /* type 0: shutdown, reason 0: none */
	sbi_call(SBI_EXT_LEGACY_SHUTDOWN, 0, 0, 0, 0);
	csr_write(CSR_SIE, 0);
	for (;;)
		wfi();
}
