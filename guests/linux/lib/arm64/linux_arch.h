/* arm64's part of the Linux programs (tern-chan, tern-vio): the system call instruction and the process entry. */
#ifndef TERN_LINUX_ARM64_LINUX_ARCH_H
#define TERN_LINUX_ARM64_LINUX_ARCH_H

static inline long linux_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a0;
	register long x1 __asm__("x1") = a1;
	register long x2 __asm__("x2") = a2;
	register long x3 __asm__("x3") = a3;
	register long x4 __asm__("x4") = a4;
	register long x5 __asm__("x5") = a5;

	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}

/* The kernel starts the process with sp at argc, 16-byte aligned: tern_start(sp). */
#define LINUX_ENTRY                                                     \
	__asm__(".text\n"                                               \
		".global _start\n"                                      \
		".type _start, %function\n"                             \
		"_start:\n"                                             \
		"	mov x29, #0\n"                                  \
		"	mov x30, #0\n"                                  \
		"	mov x0, sp\n"                                   \
		"	bl tern_start\n"                                \
		"	brk #0\n")

#endif
