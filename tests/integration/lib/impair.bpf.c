// tc cls_bpf program (clsact egress, direct action) that impairs a link like netem's
// "loss P% reorder R%" on kernels without sch_netem: it drops a random LOSS_PCT of packets and
// sets skb->priority of a random REORDER_PCT to HTB class 1:20 (the root qdisc classifies by
// priority first), which is rate-limited and so delays them behind the packets of class 1:10.
// Percentages come from -DLOSS_PCT= / -DREORDER_PCT= at compile time. Only IPv4 UDP is touched.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>

#define SEC(name) __attribute__((section(name), used))

static unsigned int (*bpf_get_prandom_u32)(void) = (void*)BPF_FUNC_get_prandom_u32;
static long (*bpf_skb_load_bytes)(const void* skb, unsigned int off, void* to,
                                  unsigned int len) = (void*)BPF_FUNC_skb_load_bytes;

#ifndef LOSS_PCT
#define LOSS_PCT 5
#endif
#ifndef REORDER_PCT
#define REORDER_PCT 25
#endif

SEC("classifier") int impair(struct __sk_buff* skb) {
  if (skb->protocol != __constant_htons(ETH_P_IP)) return TC_ACT_OK;
  unsigned char proto = 0;
  if (bpf_skb_load_bytes(skb, ETH_HLEN + 9, &proto, 1) < 0 || proto != IPPROTO_UDP) {
    return TC_ACT_OK;
  }
  unsigned int r = bpf_get_prandom_u32() % 10000;
  if (r < LOSS_PCT * 100) return TC_ACT_SHOT;
  if (bpf_get_prandom_u32() % 100 < REORDER_PCT) skb->priority = 0x00010020;  // 1:20, slow
  return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
