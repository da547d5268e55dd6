#!/usr/bin/env bash
# make lint: static analysis of the hypervisor; any finding fails (docs/static-analysis.md).
#   1. the build, whose stack check (tools/stackdepth.py) bounds every entry point's stack
#   2. clang-tidy over every hypervisor C file, with its build flags (hypervisor/.clang-tidy)
#   3. cppcheck with its MISRA C 2012 addon, for the AArch64 target, and the riscv64 files for
#      theirs (deviations: hypervisor/misra-deviations.txt)
# Both builds are analysed: arm64 (qemu-virt-arm64) and riscv64 (qemu-virt-riscv64); a file both
# compile (core/, lib/) with arm64's flags.
set -euo pipefail
cd "$(dirname "$0")/../hypervisor"
lint_dir=../scripts/lint
out=build/lint
jobs=$(nproc 2>/dev/null || echo 2)
start=$SECONDS

for tool in clang-tidy cppcheck; do
	command -v "$tool" >/dev/null || { echo "lint: $tool missing (scripts/install-deps.sh --lint)" >&2; exit 2; }
done

echo "lint: build and stack check"
make -s PLATFORM=qemu-virt-arm64 BUILD=build/arm64 all build/arm64/compile_commands.json
make -s PLATFORM=qemu-virt-riscv64 BUILD=build/riscv64 all build/riscv64/compile_commands.json
rm -rf "$out"
mkdir -p "$out/tidy"
python3 - build/arm64/compile_commands.json build/riscv64/compile_commands.json > "$out/compile_commands.json" <<'EOF_PY'
import json, sys
seen, merged = set(), []
for db in sys.argv[1:]:
    for entry in json.load(open(db)):
        if entry["file"] not in seen:
            seen.add(entry["file"])
            merged.append(entry)
json.dump(merged, sys.stdout, indent=1)
EOF_PY

# Every C file of the hypervisor is analysed with the flags it is built with: one that the
# build does not compile would be analysed with made-up flags, so it is refused.
mapfile -t files < <(find . -path ./build -prune -o -name '*.c' -print | sed 's|^\./||' | sort)
mapfile -t built < <(python3 -c 'import json, sys
for e in json.load(open(sys.argv[1])): print(e["file"])' "$out/compile_commands.json" | sort)
unbuilt=$(comm -23 <(printf '%s\n' "${files[@]}") <(printf '%s\n' "${built[@]}"))
if [ -n "$unbuilt" ]; then
	echo "lint: not in either build (compile_commands.json), so not analysed:" $unbuilt >&2
	exit 1
fi

echo "lint: clang-tidy, ${#files[@]} files"
tidy_ok=1
printf '%s\n' "${files[@]}" | xargs -P "$jobs" -I{} sh -c \
	'clang-tidy -p build/lint --quiet "$1" > "$2/$(echo "$1" | tr / _).txt" 2>&1' _ {} "$out/tidy" || tidy_ok=
# clang-tidy prints "N warnings generated" on stderr even when every one was in a system
# header it does not report; a finding is a "file:line:col: warning|error:" line.
if grep -hE '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$out"/tidy/*.txt >/dev/null; then
	grep -hE -A3 '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$out"/tidy/*.txt
	tidy_ok=
fi
if [ -z "$tidy_ok" ]; then
	echo "lint: clang-tidy found the above (disabled checks and why: hypervisor/.clang-tidy)" >&2
fi

# The addon names a rule in each finding only with a rule-texts file; this one carries no
# MISRA text, just each rule's number.
python3 - "$out/misra-rules.txt" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    print("Appendix A Summary of guidelines", file=f)
    for a in range(1, 23):
        for b in range(1, 21):
            print(f"Rule {a}.{b}\nMISRA C 2012 rule {a}.{b}", file=f)
    print("Appendix B", file=f)
EOF
printf '{"script": "misra", "args": ["--rule-texts=%s"]}\n' "$PWD/$out/misra-rules.txt" > "$out/misra.json"

echo "lint: cppcheck + MISRA C 2012 addon, ${#files[@]} files"
cppcheck_ok=1
files_of() { python3 -c 'import json, sys
for e in json.load(open(sys.argv[1])): print(e["file"])' "$1" | sort; }
mapfile -t arm64_files < <(files_of build/arm64/compile_commands.json)
mapfile -t riscv64_files < <(files_of build/riscv64/compile_commands.json)
# -D/-U: the one configuration the build compiles (C, not the assembly's view of the headers;
# not the host tests' TERN_HOST).  Both targets are LP64, little-endian.
# Each build whole (MISRA's unused-declaration rules look at the program); the deviations
# that name arm64-only code find nothing in the riscv64 build.
# The include path of the UART model the build's platform names (VUART in its platform.mk).
vuart_of() { sed -n 's/^VUART *:= *//p' "platform/$1/platform.mk"; }
run_cppcheck() {  # arch platform define extra-option files...
	local arch=$1 platform=$2 define=$3 extra=$4
	shift 4
	cppcheck --quiet --std=c11 --language=c --platform="$lint_dir/aarch64-lp64.xml" \
		-Iinclude -Iarch/"$arch"/include -Idevices/"$(vuart_of "$platform")" \
		-D"$define" -U__ASSEMBLER__ -UTERN_HOST \
		--enable=warning,style,performance,portability,information \
		--suppress=missingIncludeSystem --suppressions-list=misra-deviations.txt --inline-suppr \
		--addon="$out/misra.json" --error-exitcode=1 $extra \
		--template='{file}:{line}: {severity}: {message} [{id}]' \
		"$@" 2>> "$out/cppcheck.txt"
}
: > "$out/cppcheck.txt"
run_cppcheck arm64 qemu-virt-arm64 __aarch64__ "" "${arm64_files[@]}" || cppcheck_ok=
run_cppcheck riscv64 qemu-virt-riscv64 __riscv --suppress=unmatchedSuppression "${riscv64_files[@]}" ||
	cppcheck_ok=
if [ -s "$out/cppcheck.txt" ]; then
	cat "$out/cppcheck.txt"
	cppcheck_ok=
fi
if [ -z "$cppcheck_ok" ]; then
	echo "lint: cppcheck found the above (deviations and why: hypervisor/misra-deviations.txt)" >&2
fi

if [ -z "$tidy_ok" ] || [ -z "$cppcheck_ok" ]; then
	echo "lint: FAILED ($((SECONDS - start)) s)" >&2
	exit 1
fi
echo "lint: no findings ($((SECONDS - start)) s)"
