# Kernel-level loss and reordering on a namespace's veth, the substitute for
#   tc qdisc add dev DEV root netem loss LOSS% reorder REORDER%
# on kernels built without sch_netem (this one). Source after netns.sh.
#
#   impair_link NS_INDEX LOSS_PCT REORDER_PCT
#
# An HTB root with two classes: 1:10 at line rate and 1:20 limited to 200 Mbit/s with a short
# queue, so packets steered there arrive late (reordered) or, when it overflows, not at all.
# A cls_bpf program (impair.bpf.c) on the clsact egress hook drops LOSS_PCT of UDP packets and
# steers REORDER_PCT to 1:20 through skb->priority.

IMPAIR_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

impair_link() {
  local i=$1 loss=$2 reorder=$3
  local dev obj
  dev=$(netns_dev "$i")
  obj=$(mktemp /tmp/impair.XXXXXX.o)
  clang -O2 -target bpf -I/usr/include/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu) -DLOSS_PCT="$loss" -DREORDER_PCT="$reorder" \
    -c "$IMPAIR_DIR/impair.bpf.c" -o "$obj" || return 1
  netns_exec "$i" tc qdisc add dev "$dev" root handle 1: htb default 10 r2q 100000 || return 1
  netns_exec "$i" tc class add dev "$dev" parent 1: classid 1:1 htb rate 20gbit
  netns_exec "$i" tc class add dev "$dev" parent 1:1 classid 1:10 htb rate 19gbit ceil 20gbit
  netns_exec "$i" tc class add dev "$dev" parent 1:1 classid 1:20 htb rate 200mbit ceil 200mbit
  netns_exec "$i" tc qdisc add dev "$dev" parent 1:20 handle 20: pfifo limit 64
  netns_exec "$i" tc qdisc add dev "$dev" clsact || return 1
  netns_exec "$i" tc filter add dev "$dev" egress bpf obj "$obj" sec classifier direct-action || return 1
  rm -f "$obj"
}

# Packets the impairment dropped on namespace i's device (clsact's drop counter).
impair_drops() {
  netns_exec "$1" tc -s qdisc show dev "$(netns_dev "$1")" |
    awk '/^qdisc clsact/ {c = 1} c && /dropped/ {gsub(",", "", $7); print $7 + 0; exit}'
}

# Packets the impairment delayed behind the others (reordered) on namespace i's device: those
# sent through the slow class 1:20 ("Sent N bytes M pkt").
impair_reordered() {
  netns_exec "$1" tc -s class show dev "$(netns_dev "$1")" |
    awk '$1 == "class" {c = $3 == "1:20"} c && $1 == "Sent" {print $4 + 0; exit}'
}

# impair_check LOSS_PCT REORDER_PCT I...: prints what the impairment did on namespaces I... and
# fails unless it dropped packets (LOSS_PCT > 0) and reordered packets (REORDER_PCT > 0) - an
# impaired run that was not impaired proves nothing.
impair_check() {
  local loss=$1 reorder=$2 i d r drops="" delayed="" nd=0 nr=0
  shift 2
  for i in "$@"; do
    d=$(impair_drops "$i") r=$(impair_reordered "$i")
    drops+="${drops:+ + }${d:-?}" delayed+="${delayed:+ + }${r:-?}"
    nd=$((nd + ${d:-0})) nr=$((nr + ${r:-0}))
  done
  echo "impairment dropped $drops packets, reordered $delayed"
  local bad=0
  if [ "$loss" != 0 ] && [ $nd -eq 0 ]; then echo "FAIL: ${loss}% loss dropped nothing"; bad=1; fi
  if [ "$reorder" != 0 ] && [ $nr -eq 0 ]; then echo "FAIL: ${reorder}% reordering reordered nothing"; bad=1; fi
  if [ $((nd + nr)) -eq 0 ]; then echo "FAIL: the impairment dropped and reordered nothing"; bad=1; fi
  return $bad
}
