#!/usr/bin/env bash
# Generated sources are what their generators make: regenerates every generated file into a scratch
# directory and fails, listing the files that differ, when a committed file is not byte-identical
# (edited by hand, or its generator or template changed without regenerating). Standard tools and
# python3 only; takes about a second.
#
#   Scripts/check-generated.sh
#
# Generators (run them to fix a failure):
#   python3 Scripts/gen_montgomery.py > Sources/RampartAccelBMI2/MontgomeryBMI2Fixed.generated.swift
#   python3 Scripts/gen_montgomery_ifma.py     (RampartAccelIFMA/MontgomeryIFMA.generated.swift)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Pairs of (committed file, freshly generated file).
files=()
python3 Scripts/gen_montgomery.py > "$work/MontgomeryBMI2Fixed.generated.swift"
files+=("Sources/RampartAccelBMI2/MontgomeryBMI2Fixed.generated.swift" "$work/MontgomeryBMI2Fixed.generated.swift")
python3 Scripts/gen_montgomery_ifma.py --stdout > "$work/MontgomeryIFMA.generated.swift"
files+=("Sources/RampartAccelIFMA/MontgomeryIFMA.generated.swift" "$work/MontgomeryIFMA.generated.swift")

stale=()
for ((i = 0; i < ${#files[@]}; i += 2)); do
    committed=${files[i]} fresh=${files[i + 1]}
    if [ ! -f "$committed" ]; then
        stale+=("$committed (missing)")
    elif ! cmp -s "$committed" "$fresh"; then
        stale+=("$committed")
        diff -u "$committed" "$fresh" | head -20 >&2 || true
    fi
done
if [ ${#stale[@]} -gt 0 ]; then
    echo "check-generated: these generated files differ from what their generators produce now:" >&2
    printf '  %s\n' "${stale[@]}" >&2
    echo "Regenerate them (see the generator commands at the top of Scripts/check-generated.sh) and commit;" >&2
    echo "edit the generator or its template, never the generated file." >&2
    exit 1
fi
echo "check-generated: $(( ${#files[@]} / 2 )) generated files are up to date"
