#!/usr/bin/env bash
# Installs the Debian packages the project builds and tests with, only those missing.
# Idempotent and non-interactive; run as root on Debian 12 (bookworm).
set -euo pipefail

build_pkgs=(cmake g++ make pkg-config libboost-dev libsqlite3-dev liblz4-dev libisal-dev libspdlog-dev
            libxxhash-dev nlohmann-json3-dev catch2 libcli11-dev clang libclang-rt-14-dev clang-format
            cyclonedds-dev zlib1g-dev libdeflate-dev libzstd-dev cyclonedds-tools libsystemd-dev dpkg-dev file
            libssl-dev)
# (libisal-dev: ISA-L's CRC-32C for storage's checksums.
#  cyclonedds-tools: idlc, run at build time by tests/unit/types; ddsperf for the tests.
#  libssl-dev: libcrypto's HMAC-SHA256 for signed DDS control requests.
#  libsystemd-dev: sd_notify for pubsub-recorder. dpkg-dev and file: `cpack -G DEB` finds the
#  package's Depends with dpkg-shlibdeps.)
# (systemd: systemd-analyze, which checks pubsub-recorder@.service in tests/install.)
# (libfaketime: one process's clock moved, for the clock tests; never the machine's own clock.)
test_pkgs=(iproute2 tshark iperf procps util-linux gnuplot-nox systemd curl libfaketime)
# Peers of the same-host benchmark: Fast DDS (perf/peers/fastdds_perftest builds against it)
# and iceoryx's RouDi (Cyclone DDS's shared memory).
peer_pkgs=(libfastrtps-dev iceoryx)

missing=()
for p in "${build_pkgs[@]}" "${test_pkgs[@]}" "${peer_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm for the MCAP check (tests/tools/mcap_check): Debian's packages, unless a node
# with npm is already there (NodeSource's nodejs package carries its own npm).
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)

# The MCAP check's npm packages, pinned by its package-lock.json, into its node_modules (only
# when they are not there yet: npm ci would reinstall every time).
install_mcap_check() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/tools/mcap_check"
  [ -f "$dir/package-lock.json" ] || return 0
  [ -d "$dir/node_modules" ] && [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ] && return 0
  echo "setup.sh: npm ci in $dir"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
    { echo "setup.sh: npm ci failed in $dir" >&2; return 1; }
}
if [ ${#missing[@]} -eq 0 ]; then
  install_mcap_check
  exit $?
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: missing packages (${missing[*]}); run as root to install them" >&2
  exit 1
fi
echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no without a prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_mcap_check
