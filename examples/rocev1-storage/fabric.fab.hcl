# RoCEv1 storage cluster: one bridged L2 domain, lossless by PFC on PCP.
#
# RoCEv1 frames are Ethertype 0x8915 with no IP header: they cannot be routed, so every
# initiator and target must sit in one broadcast domain (lint TR-1), and classification can
# only use the 802.1p PCP of a VLAN tag. That settles most of this file:
#
#   - forwarding "bridged" on every switch, one VLAN (100) end to end, tagged on the hosts;
#   - trust "pcp": the RDMA interface is VLAN 100 and puts RoCE on PCP 3;
#   - no ECN: ECN bits live in the IP header RoCEv1 does not have, so DCQCN cannot work and
#     congestion control is PFC alone ("pfc-only", stated explicitly);
#   - unknown unicast is dropped, never flooded: flooding lossless frames to every port while
#     a MAC entry is missing is how lossless L2 fabrics deadlock (lint SAFE-3).
#
# Topology: a tree, which is loop-free and so deadlock-free for PFC:
#
#                 agg1 (SN2700, 32 x 100G)
#                /                     \
#     leaf1 (SN2410)                leaf2 (SN2410)       48 x 25G + 8 x 100G each
#     stor01 stor02 app01 app02     stor03 stor04 app03 app04
#
# 4 x 25G down and 1 x 100G up per leaf: 1:1. A production cluster would bundle two uplinks
# per leaf (LAG/MLAG) for redundancy; the spec has no LAG yet, and two parallel bridged links
# without one would be an L2 loop, so this example keeps one.
#
#   fabctl validate --static examples/rocev1-storage

fabric "storage-l2" {
  transport = "rocev1"
  trust     = "pcp" # the RoCEv1 default, written for the reader

  # RoCEv1 default congestion control is DCQCN, which needs IP ECN: say what actually runs.
  congestion_control = "pfc-only"

  # 9000 on the hosts; the switches' L2 MTU covers it plus the 4-byte VLAN tag (the links say
  # vlan_tags = 1). RoCEv1 payload 4096 + GRH 40 + BTH 12 + ICRC 4 fits easily.
  mtu      = 9000
  rdma_mtu = 4096

  # RoCEv1 has no IP header, yet the ToS still decides its PCP: rdma_cm takes the PCP of a
  # connection from the RDMA interface's VLAN egress map at rt_tos2priority(ToS) (cma.c
  # iboe_tos_to_sl), and that yields only skb priority 0, 2, 4 or 6. ToS 8 (IPTOS_THROUGHPUT)
  # gives skb priority 2; fabctl's egress map sends 2 (and the class priority 3) to PCP 3
  # (egress-qos-map 2:3 3:3). With ToS 0 the entry would be 0:3 and every other packet on
  # the storage VLAN (NFS, ssh) would ride the lossless PCP too (lint HOST-7).
  rdma_tos = 8

  pfc_watchdog {
    enabled = true
    detect  = "200ms"
    restore = "400ms"
    action  = "drop"
  }
}

# Two classes only. No CNP class: without ECN marks no CNPs are generated.
class "roce" {
  role      = "rdma"
  priority  = 3 # PCP 3 = priority 3, the usual lossless priority
  lossless  = true
  bandwidth = 50
  # No dscp (nothing to match) and no ecn block (nothing to mark).
}

class "default" {
  role      = "other"
  priority  = 0
  default   = true # untagged and PCP-0 traffic: management, NFS, everything that is not RoCE
  bandwidth = 50
}

credentials "cumulus" {
  username    = "cumulus"
  password    = env("CUMULUS_PASSWORD")
  known_hosts = "/etc/fabctl/known_hosts"
}

credentials "storage-hosts" {
  username    = "fabctl"
  private_key = file("/etc/fabctl/id_ed25519")
  known_hosts = "/etc/fabctl/known_hosts"
}
