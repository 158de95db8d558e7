#!/usr/bin/env bash
# Type-checks the arm64 side of the kernel seam on an x86_64 machine: the ARMv8 kernel module and the
# Rampart module with `-D RAMPART_TYPECHECK_ARM64`, which selects the arm64 candidate lists of the
# registries instead of the x86_64 ones (see Sources/Rampart/Platform/Registrations.swift). No machine code is generated: this proves the arm64 files compile against the
# engines, not that they run (run `rampart vectors` on an arm64 machine for that).
# Needs a debug build first (for the RampartBarrier and RampartKernelSupport modules): swift build.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for m in RampartKernelSupport RampartAccelARMv8 RampartAccelARMv8SHA RampartAccelARMv8SHA512 RampartAccelARMv8AESSHA; do
    swiftc -emit-module -parse-stdlib -D RAMPART_TYPECHECK_ARM64 -I "$out" -I .build/debug/Modules -module-name "$m" \
        Sources/"$m"/*.swift -emit-module-path "$out/$m.swiftmodule"
done
swiftc -typecheck -package-name rampart -D RAMPART_TYPECHECK_ARM64 -I "$out" -I .build/debug/Modules \
    -module-name Rampart $(find Sources/Rampart -name '*.swift' | sort)
echo "arm64 type-check: ok (RampartKernelSupport, RampartAccelARMv8, RampartAccelARMv8SHA, RampartAccelARMv8SHA512, RampartAccelARMv8AESSHA and Rampart with RAMPART_TYPECHECK_ARM64)"
