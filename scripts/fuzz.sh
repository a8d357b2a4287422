#!/usr/bin/env bash
# `make fuzz`: run every fuzz target (fuzz-targets/, cargo-fuzz + libFuzzer) for a bounded time.
#   - installs what is missing: cargo-fuzz into .tools (cargo install --locked), the nightly
#     toolchain (rustup, minimal profile);
#   - builds the Redfish seed corpora from the captured trees in ../shared/redfish (never copied
#     into the repository) into fuzz/corpus-seeds/ (gitignored), when they are there;
#   - runs each target for FUZZ_SECONDS (default 60) on a working corpus fuzz/corpus/<target>/
#     (gitignored) seeded from fuzz-targets/seeds/<target>/, with memory limits (one allocation
#     over FUZZ_MALLOC_MB, default 512, or a process over FUZZ_RSS_MB, default 2048, is a finding);
#   - copies every crash, leak, OOM or timeout into fuzz-targets/regressions/<target>/
#     (minimized with `cargo fuzz tmin` when that is quick), which `make test` replays;
#   - prints a table: target, executions, exec/s, corpus size, findings.
# Usage: scripts/fuzz.sh [target...]   (default: every target; FUZZ_SECONDS=10 for a smoke run)
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
FUZZ_RSS_MB="${FUZZ_RSS_MB:-2048}"
FUZZ_MALLOC_MB="${FUZZ_MALLOC_MB:-512}"
FUZZ_MAX_LEN="${FUZZ_MAX_LEN:-131072}"
CARGO_FUZZ_VERSION=0.13.2
export PATH="$PWD/.tools/bin:$PATH"

if ! cargo fuzz --version 2>/dev/null | grep -q "${CARGO_FUZZ_VERSION}"; then
  echo "fuzz: installing cargo-fuzz ${CARGO_FUZZ_VERSION} into .tools"
  cargo install cargo-fuzz --version "${CARGO_FUZZ_VERSION}" --locked --root .tools
fi
if ! rustup toolchain list | grep -q '^nightly'; then
  echo "fuzz: installing the nightly toolchain (cargo-fuzz needs -Z sanitizer flags)"
  rustup toolchain install nightly --profile minimal
fi

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(ls fuzz/fuzz_targets | sed 's/\.rs$//' | sort)
fi

echo "fuzz: building the instrumented targets (cargo +nightly fuzz build; fuzz/target)"
cargo +nightly fuzz build

# Seeds from the captured Redfish trees: written at run time, never committed.
extra_seeds="fuzz/corpus-seeds"
if [ -d ../shared/redfish ]; then
  echo "fuzz: building the Redfish seed corpora from ../shared/redfish into ${extra_seeds}"
  rm -rf "${extra_seeds}"
  cargo run -q -p hostfw-fuzz-targets --bin redfish-seeds -- ../shared/redfish "${extra_seeds}"
else
  echo "fuzz: no ../shared/redfish: the Redfish targets start from the committed seeds only"
fi

results=()
found_any=0
for target in "${targets[@]}"; do
  corpus="fuzz/corpus/${target}"
  artifacts="fuzz/artifacts/${target}"
  mkdir -p "${corpus}" "${artifacts}"
  seed_dirs=("fuzz-targets/seeds/${target}")
  [ -d "${extra_seeds}/${target}" ] && seed_dirs+=("${extra_seeds}/${target}")
  [ -d "fuzz-targets/regressions/${target}" ] && seed_dirs+=("fuzz-targets/regressions/${target}")
  before=$(ls "${artifacts}" | wc -l)
  log="fuzz/artifacts/${target}.log"
  echo "fuzz: ${target} for ${FUZZ_SECONDS}s"
  set +e
  cargo +nightly fuzz run "${target}" "${corpus}" "${seed_dirs[@]}" -- \
    -max_total_time="${FUZZ_SECONDS}" -rss_limit_mb="${FUZZ_RSS_MB}" -malloc_limit_mb="${FUZZ_MALLOC_MB}" \
    -max_len="${FUZZ_MAX_LEN}" -timeout=30 -print_final_stats=1 -artifact_prefix="${artifacts}/" \
    >"${log}" 2>&1
  status=$?
  set -e
  execs=$(grep -oP 'stat::number_of_executed_units:\s*\K[0-9]+' "${log}" | tail -1 || true)
  speed=$(grep -oP 'stat::average_exec_per_sec:\s*\K[0-9]+' "${log}" | tail -1 || true)
  size=$(ls "${corpus}" | wc -l)
  new_findings=()
  while IFS= read -r f; do
    [ -n "$f" ] && new_findings+=("$f")
  done < <(ls -t "${artifacts}" | head -n $(( $(ls "${artifacts}" | wc -l) - before )))
  if [ "${status}" -ne 0 ] && [ "${#new_findings[@]}" -eq 0 ]; then
    echo "fuzz: ${target} stopped with status ${status} and no finding; see ${log}" >&2
    tail -20 "${log}" >&2
    exit 1
  fi
  for f in "${new_findings[@]}"; do
    found_any=1
    mkdir -p "fuzz-targets/regressions/${target}"
    src="${artifacts}/${f}"
    dst="fuzz-targets/regressions/${target}/${f}"
    # Minimize when quick; keep the original otherwise.
    if timeout 120 cargo +nightly fuzz tmin "${target}" "${src}" -- -runs=2000 >"${log}.tmin" 2>&1; then
      min=$(grep -oP 'CRASH_MIN: minimizing crash input: '"'"'\K[^'"'"']+' "${log}.tmin" | tail -1 || true)
      [ -z "${min}" ] && min=$(ls -t "${artifacts}"/minimized-from-* 2>/dev/null | head -1 || true)
      [ -n "${min}" ] && [ -f "${min}" ] && src="${min}"
    fi
    cp "${src}" "${dst}"
    echo "fuzz: ${target}: finding saved as ${dst} (log: ${log})"
    grep -m3 -E 'panicked at|ERROR: libFuzzer|==ERROR' "${log}" | sed 's/^/    /' || true
  done
  results+=("${target}|${execs:-0}|${speed:-0}|${size}|${#new_findings[@]}")
done

echo
printf '%-18s %12s %8s %8s %9s\n' target executions exec/s corpus findings
for row in "${results[@]}"; do
  IFS='|' read -r t e s c f <<<"${row}"
  printf '%-18s %12s %8s %8s %9s\n' "$t" "$e" "$s" "$c" "$f"
done
if [ "${found_any}" -ne 0 ]; then
  echo "fuzz: findings were saved under fuzz-targets/regressions/; fix them, then \`make test\` replays them" >&2
  exit 1
fi
