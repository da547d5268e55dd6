/*
 * CPU_ON entry points for the power races (hostile.c, power-race): the started CPU calls
 * PSCI CPU_OFF straight away, through HVC or SMC (the /psci conduit decides which the caller
 * names), touching no memory and no stack. Should CPU_OFF return, the CPU parks.
 */
#define PSCI_CPU_OFF_HI 0x8400
#define PSCI_CPU_OFF_LO 0x0002

	.text
	.balign 4
	.globl off_entry_hvc
off_entry_hvc:
	msr	daifset, #0xf
	movz	x0, #PSCI_CPU_OFF_LO
	movk	x0, #PSCI_CPU_OFF_HI, lsl #16
	hvc	#0
	b	park_entry

	.balign 4
	.globl off_entry_smc
off_entry_smc:
	msr	daifset, #0xf
	movz	x0, #PSCI_CPU_OFF_LO
	movk	x0, #PSCI_CPU_OFF_HI, lsl #16
	smc	#0
	b	park_entry
