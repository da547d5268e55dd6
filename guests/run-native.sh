#!/bin/sh
# Boots the guests on the bare QEMU board (entered at EL2, PSCI over SMC) and at EL1 (no
# virtualization: the partition-like path, PSCI over HVC), with and without icount, and
# checks each run powers off by itself after its DONE line with no failed PROBE-JSON line
# and no JSON line reporting an error. The riscv64 lat runs on the riscv virt board under
# OpenSBI.
set -u
cd "$(dirname "$0")"
QEMU=${QEMU:-qemu-system-aarch64}
QEMU_RISCV64=${QEMU_RISCV64:-qemu-system-riscv64}
ICOUNT="-icount shift=4,align=off,sleep=off"
failed=0
PROBE_EL2="probe.tests=smp,psci,timer-pending,prio,sgi-foreign,psci-foreign,hvc-unknown"
# Entered at EL1 with neither EL2 nor EL3 below, SMC is UNDEFINED, so no hvc-unknown there.
PROBE_EL1="probe.tests=smp,psci,timer-pending,prio,sgi-foreign,psci-foreign"
# lat's device tests: QEMU's edu PCI device, with the 32-bit PCI layout a Tern board has.
EDU="-device edu,addr=2.0"

run() {  # machine cpu icount image bootargs done-marker [more QEMU arguments]
	case $4 in riscv64/*) qemu=$QEMU_RISCV64 ;; *) qemu=$QEMU ;; esac
	out=$(timeout 60 $qemu -M "$1" -cpu "$2" -smp 2 -m 512M -nographic $3 ${7:-} \
		-kernel "build/$4.img" -append "$5" 2>&1)
	rc=$?
	fails=$(printf '%s\n' "$out" | grep -E '^(PROBE|LAT|NOISE)-JSON' |
		grep -E '"pass":false|"error"')
	if [ $rc -eq 0 ] && [ -z "$fails" ] && printf '%s\n' "$out" | grep -q "^$6\$"; then
		echo "ok   $4 $1 $2 ${3:+icount}${7:+ $7}"
	else
		echo "FAIL $4 $1 $2 ${3:+icount}${7:+ $7} (exit $rc)"
		printf '%s\n' "$out" | tail -n 20
		failed=1
	fi
	printf '%s\n' "$out" | grep -E '^(LAT|PROBE)-JSON' | grep -v '"pass":true' |
		sed -n 's/^LAT-JSON {"test":"\([^"]*\)".*"unit":"ticks","avg":\([^,]*\),"ema":[^,]*,"min":\([^,]*\).*/     \1 avg \2 min \3/p'
}

for machine in virt,virtualization=on,gic-version=3 virt,gic-version=3; do
	case $machine in
	*virtualization=on*) probe_args=$PROBE_EL2 ;;
	*) probe_args=$PROBE_EL1 ;;
	esac
	for icount in "" "$ICOUNT"; do
		run "$machine" cortex-a53 "$icount" arm64/lat "lat.samples=50" LAT-DONE
		run "$machine" cortex-a53 "$icount" arm64/probe "$probe_args" PROBE-DONE
		run "$machine" cortex-a53 "$icount" arm64/lat "lat.samples=50 lat.tests=sgi-wfi,sgi-busy" \
			LAT-DONE
		run "$machine,highmem=off" cortex-a53 "$icount" arm64/lat \
			"lat.samples=50 lat.tests=edu-wfi,edu-busy" LAT-DONE "$EDU"
		run "$machine" cortex-a53 "$icount" arm64/noise "noise.bursts=200" NOISE-DONE
	done
done
for cpu in cortex-a57 max; do
	run virt,virtualization=on,gic-version=3 "$cpu" "$ICOUNT" arm64/lat "lat.samples=50" LAT-DONE
	run virt,virtualization=on,gic-version=3 "$cpu" "" arm64/probe "$PROBE_EL2" PROBE-DONE
done
RV_TESTS="sstc-wfi,sstc-busy,sbi-timer-wfi,sbi-timer-busy,ipi-wfi,ipi-busy,sbi-ipi-wfi,sbi-ipi-busy"
RV_TESTS="$RV_TESTS,edu-wfi,edu-busy"
for icount in "" "-icount shift=0,align=off,sleep=off"; do
	run virt,aia=aplic-imsic,aia-guests=4 rv64,h=true,sstc=true "$icount" riscv64/lat \
		"lat.samples=50 lat.tests=$RV_TESTS" LAT-DONE "$EDU"
done
exit $failed
