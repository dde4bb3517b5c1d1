# The subscriber that takes pubsub-perftest's publisher arguments. Source it.
#
#   perftest_sub_for FASTDDS ARGS...
#
# Sets sub_exe and sub_args: pubsub-perftest with all of ARGS, or with FASTDDS=1
# fastdds_perftest (Fast DDS 2.9; the same topic, type and summary) with only their -datalen
# and -payload; exits 77 (skip) when fastdds_perftest is not built.
perftest_sub_for() {
  local fastdds=$1
  shift
  sub_exe=pubsub-perftest sub_args=("$@")
  [ "$fastdds" = 1 ] || return 0
  sub_exe=fastdds_perftest sub_args=()
  # Registered whether or not Fast DDS is installed: a build without it skips (CI=true fails).
  [ -x "$BIN/fastdds_perftest" ] || { echo "SKIP: $BIN/fastdds_perftest is not built (Fast DDS missing)"; exit 77; }
  while [ $# -gt 0 ]; do
    case $1 in -datalen | -payload) [ $# -gt 1 ] && sub_args+=("$1" "$2") ;; esac
    shift
  done
}
