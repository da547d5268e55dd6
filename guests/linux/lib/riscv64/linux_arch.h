/* riscv64's part of the Linux programs (tern-chan, tern-vio): the system call instruction and the process entry. */
#ifndef TERN_LINUX_RISCV64_LINUX_ARCH_H
#define TERN_LINUX_RISCV64_LINUX_ARCH_H

static inline long linux_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	register long a7_ __asm__("a7") = nr;
	register long a0_ __asm__("a0") = a0;
	register long a1_ __asm__("a1") = a1;
	register long a2_ __asm__("a2") = a2;
	register long a3_ __asm__("a3") = a3;
	register long a4_ __asm__("a4") = a4;
	register long a5_ __asm__("a5") = a5;

	__asm__ volatile("ecall"
			 : "+r"(a0_)
			 : "r"(a7_), "r"(a1_), "r"(a2_), "r"(a3_), "r"(a4_), "r"(a5_)
			 : "memory");
	return a0_;
}

/*
 * The kernel starts the process with sp at argc, 16-byte aligned: tern_start(sp). Nothing
 * is addressed through gp (linked without relaxation), so it is left alone.
 */
#define LINUX_ENTRY                                                     \
	__asm__(".text\n"                                               \
		".global _start\n"                                      \
		".type _start, %function\n"                             \
		"_start:\n"                                             \
		"	li ra, 0\n"                                     \
		"	mv a0, sp\n"                                    \
		"	call tern_start\n"                              \
		"	ebreak\n")

#endif
