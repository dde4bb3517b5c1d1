# The disk's rate for what a recorder must write, for the perf scripts (source it).
# dd_write_mbs FILE MIB: MB/s (10^6 bytes per second) of MIB MiB of zeros written to FILE with
# `dd bs=1M conv=fdatasync`; FILE must not exist (it is this call's own, removed after: an existing
# file is refused, not overwritten). Prints nothing when dd fails (disk full, say).
# On a VM the first run after a while often goes at a third of the next (the page cache it fills
# is memory the guest has not touched yet): callers take the best of two or three back to back.
dd_write_mbs() {
  local line
  [ ! -e "$1" ] || return 1
  line=$(dd if=/dev/zero of="$1" bs=1M count="$2" conv=fdatasync 2>&1 | tail -n 1)
  rm -f "$1"
  echo "$line" | awk '/ copied, / {for (i = 1; i < NF; i++) if ($i == "copied,") printf "%.0f", $1 / $(i + 1) / 1e6}'
}
