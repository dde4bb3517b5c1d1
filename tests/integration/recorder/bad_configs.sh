#!/usr/bin/env bash
# Bad configurations: each gives one clear message naming the problem, exit 2, nothing created.
set -u
BIN=$(cd "${BIN:?set BIN to the bin directory of the build}" && pwd)
work=$(mktemp -d) || exit 1  # removed on exit: only what this script made
trap 'rm -rf "$work"' EXIT
cd "$work"
status=0
# check NAME EXPECTED_SUBSTRING -- recorder args...
check() {
  local name=$1 expect=$2
  shift 3
  local before after rc
  before=$(find "$work" | sort)
  "$BIN/pubsub-recorder" "$@" >out.txt 2>err.txt
  rc=$?
  after=$(find "$work" | sort | grep -v -e '/out.txt$' -e '/err.txt$')
  before=$(echo "$before" | grep -v -e '/out.txt$' -e '/err.txt$')
  printf '%-22s exit %d: %s\n' "$name" $rc "$(head -c 300 err.txt | tr '\n' '|')"
  [ $rc -eq 2 ] || { echo "FAIL: $name: exit $rc, expected 2"; status=1; }
  grep -qF -- "$expect" err.txt || { echo "FAIL: $name: message lacks \"$expect\""; status=1; }
  [ "$before" = "$after" ] || { echo "FAIL: $name: files were created:"; diff <(echo "$before") <(echo "$after"); status=1; }
}
good='"storage": {"path": "rec"}'
echo '{'"$good"', "domain": 0}' >good.json
echo '{"storage": {"path": "rec"}, "domain": 0' >invalid.json
echo '{'"$good"', "domian": 0}' >unknown.json
echo '{'"$good"', "domain": "zero"}' >wrongtype.json
echo '{'"$good"', "topics": {"include": ["sensors/[abc"]}}' >badglob.json
echo '{"storage": {"path": "/proc/pubsub-recorder-test"}}' >unwritable.json
echo '{"storage": {"path": "rec", "fsync": "always"}, "queue_max_bytes": 12}' >twoerrors.json
check "missing file" "cannot read missing.json: No such file or directory" -- --config missing.json
check "invalid JSON" "invalid.json:2:1: invalid JSON" -- --config invalid.json
check "unknown key" '/domian: unknown key' -- --config unknown.json
check "unknown key hint" 'did you mean "domain"' -- --config unknown.json
check "wrong type" '/domain: expected an integer' -- --config wrongtype.json
check "bad glob" "/topics/include/0: invalid topic pattern \"sensors/[abc\"" -- --config badglob.json
check "unwritable path" 'parent directory "/proc" is not writable' -- --config unwritable.json
check "two problems" '/storage/fsync' -- --config twoerrors.json
check "two problems (2)" '/queue_max_bytes' -- --config twoerrors.json
echo '{"storage": {"path": "rec", "min_free_bytes": -1, "on_low_space": "delete"}}' >diskguard.json
check "disk guard limit" '/storage/min_free_bytes: expected an integer >= 0, got -1' -- --config diskguard.json
check "disk guard policy" '/storage/on_low_space: expected one of "stop", "rotate", got "delete"' -- --config diskguard.json
echo '{'"$good"', "interface": "nosuchif0"}' >badif.json
check "bad interface" "no network interface 'nosuchif0'" -- --config badif.json --duration 1
check "bad --duration" "--duration: must be a positive number of seconds" -- --config good.json --duration -3
# The command line alone (no --config): each flag is checked as its key, and named.
check "flag out of range" "--domain 300: /domain: expected an integer in 0..232, got 300" -- -o rec -d 300
check "--set unknown key" '--set foo=1: /foo: unknown key' -- -o rec --set foo=1
check "--set bad value" '--set storage.fsync=always: /storage/fsync: expected one of "none", "chunk", "segment", "interval", got "always"' -- -o rec --set storage.fsync=always
check "--set without =" '--set fsync: expected KEY=VALUE' -- -o rec --set fsync
check "--split-size form" '--split-size 1Q: /storage/segment_max_bytes: expected an integer in 1048576..1099511627776, got "1Q"' -- -o rec --split-size 1Q
check "--all and topics" '--all records every topic: give no TOPIC with it' -- -o rec -a 'rt/*'
check "file and a bad flag" "--domain x: /domain: expected an integer" -- --config good.json -d x
check "file error kept" '/domian: unknown key' -- --config unknown.json -d 3
# --check-config tries what the start tries: the interface (the message lists those that exist)
# and the metrics address.
check "check: no interface" "command line: /interface: no network interface 'nosuchif0' that is up with an IPv4 address (there are: lo 127.0.0.1" -- -o rec -i nosuchif0 --check-config
check "check: metrics" "command line: /metrics/listen: metrics endpoint 198.18.255.254:9464: Cannot assign requested address" -- -o rec -i lo --metrics 198.18.255.254:9464 --check-config
# types.idl: a syntax error names file, line and column (with and without --check-config); a
# missing file is named too.
printf 'module m {\n  struct S { long a };\n};\n' >bad.idl
echo '{'"$good"', "types": {"idl": ["bad.idl"]}}' >badidl.json
check "IDL syntax error" "bad.idl:2:" -- --config badidl.json
check "IDL syntax error (check)" "bad.idl:2:" -- --config badidl.json --check-config
echo '{'"$good"', "types": {"idl": ["none.idl"]}}' >noidl.json
check "IDL file missing" "noidl.json: /types/idl: open none.idl: No such file or directory" -- --config noidl.json
# Service endpoints that cannot be opened stop the start before the recording exists: a metrics
# address not on this host (nothing is sent: bind fails), a control socket path that is a file.
echo '{'"$good"', "interface": "lo", "metrics": {"listen": "198.18.255.254:9464"}}' >metrics.json
check "metrics not bindable" "metrics endpoint 198.18.255.254:9464: Cannot assign requested address" -- --config metrics.json --duration 1
check "check: metrics (file)" "metrics.json: /metrics/listen: metrics endpoint 198.18.255.254:9464: Cannot assign requested address" -- --config metrics.json --check-config
echo '{'"$good"', "interface": "lo", "control": {"socket": "'"$work"'/good.json"}}' >sock.json
check "control socket a file" "control socket $work/good.json exists and is not a socket" -- --config sock.json --duration 1
echo '{'"$good"', "metrics": {"listen": "localhost:1"}}' >badlisten.json
check "metrics.listen form" '/metrics/listen: expected "IPV4:PORT"' -- --config badlisten.json
# Snapshot mode: storage.path holding a recording is refused; a bad window.
mkdir -p hasrec && : >hasrec/index.sqlite3
echo '{"storage": {"path": "hasrec"}, "mode": "snapshot"}' >snaprec.json
check "snapshot dir is a recording" 'storage path "hasrec" holds a recording (index.sqlite3 present); in snapshot mode storage.path is the directory each snapshot'"'"'s recording is made in: use another directory' -- --config snaprec.json
echo '{'"$good"', "mode": "snapshot", "snapshot": {"before_s": 0}}' >snapwindow.json
check "snapshot before_s 0" '/snapshot/before_s: expected a number > 0 and <= 3600, got 0' -- --config snapwindow.json
# DDS control: an empty allow list is refused (not "everyone"), as is a network that is not one.
# The whole of stderr is compared (exact_err).
exact_err() { [ "$(cat err.txt)" = "$1" ] || { echo "FAIL: stderr '$(cat err.txt)', expected '$1'"; status=1; }; }
required='/control/allow: required when /control/dds is true (expected a non-empty array of the IPv4 networks whose participants may send commands, e.g. ["127.0.0.1/32"])'
echo '{'"$good"', "control": {"dds": true}}' >ddsnoallow.json
check "dds without allow" "$required" -- --config ddsnoallow.json
exact_err "ddsnoallow.json: $required"
echo '{'"$good"', "control": {"dds": true, "allow": []}}' >ddsemptyallow.json
check "dds with allow []" "$required, got []" -- --config ddsemptyallow.json
exact_err "ddsemptyallow.json: $required, got []"
echo '{'"$good"', "control": {"dds": true, "allow": ["198.18.0.0/15", "198.18.0.0/33", "lan"]}}' >badcidr.json
check "allow: prefix > 32" '/control/allow/1: expected a prefix length in 0..32, got "198.18.0.0/33"' -- --config badcidr.json
exact_err 'badcidr.json: /control/allow/1: expected a prefix length in 0..32, got "198.18.0.0/33"
badcidr.json: /control/allow/2: expected an IPv4 network such as "198.18.0.0/15" or an IPv4 address, got "lan"'
# storage.path's strftime conversions: an unknown one, a lone "%" at the end, a path that expands
# to nothing (a time zone without an abbreviation).
echo '{"storage": {"path": "rec-%Y%m%d-%Q"}}' >badconversion.json
check "unknown % conversion" 'storage path "rec-%Y%m%d-%Q": unknown conversion "%Q"' -- --config badconversion.json
echo '{"storage": {"path": "rec-%"}}' >lonepercent.json
check "lone %" 'storage path "rec-%" ends with a lone "%"' -- --config lonepercent.json
echo '{"storage": {"path": "%Z"}}' >emptypath.json
TZ='<>0' check "expands to nothing" 'storage path "%Z" expands to an empty string' -- --config emptypath.json
# --check-config names the expanded directory: the date of the start (TZ as given).
echo '{"storage": {"path": "rec-%Y%m%d-%H%M%S"}}' >pattern.json
day0=$(TZ=UTC0 date +%Y%m%d)
TZ=UTC0 "$BIN/pubsub-recorder" --config pattern.json --check-config >out.txt 2>&1
day1=$(TZ=UTC0 date +%Y%m%d)
grep -qE "recording would go to rec-($day0|$day1)-[0-9]{6}\)$" out.txt ||
  { echo "FAIL: --check-config with storage.path rec-%Y%m%d-%H%M%S"; cat out.txt; status=1; }
# --check-config on a good file: exit 0, still nothing created.
before=$(find "$work" | sort)
"$BIN/pubsub-recorder" --config good.json --check-config >out.txt 2>&1 || { echo "FAIL: --check-config on a good file"; cat out.txt; status=1; }
[ "$(find "$work" | sort | grep -v out.txt)" = "$(echo "$before" | grep -v out.txt)" ] || { echo "FAIL: --check-config created files"; status=1; }
# A file without storage.path is complete with -o; the flags win over the file's keys.
echo '{"domain": 5, "interface": "lo"}' >nopath.json
"$BIN/pubsub-recorder" --config nopath.json -o flagrec -d 6 --check-config >out.txt 2>err.txt ||
  { echo "FAIL: --config without storage.path plus -o: $(cat err.txt)"; status=1; }
[ "$(cat out.txt)" = "nopath.json: configuration OK (recording would go to flagrec)" ] ||
  { echo "FAIL: -o with a file: '$(cat out.txt)'"; status=1; }
# No file and no -o: a new directory named after the start; --version, --help naming ctl.
TZ=UTC0 "$BIN/pubsub-recorder" -i lo --check-config >out.txt 2>&1
grep -qE "^command line: configuration OK \(recording would go to rec-($day0|$day1)-[0-9]{6}\)$" out.txt ||
  { echo "FAIL: the default directory: $(cat out.txt)"; status=1; }
[ "$("$BIN/pubsub-recorder" --version)" = "pubsub-recorder 0.1.0" ] || { echo "FAIL: --version"; status=1; }
"$BIN/pubsub-recorder" --help | grep -q "^Control a running recorder: pubsub-recorder ctl status|pause|resume|split|tag|snapshot|stop" ||
  { echo "FAIL: --help does not name ctl"; status=1; }
[ -e flagrec ] && { echo "FAIL: --check-config created flagrec"; status=1; }
exit $status
