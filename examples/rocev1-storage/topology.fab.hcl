# Switches, hosts and cables of the RoCEv1 storage cluster.

locals {
  # One broadcast domain: every RDMA interface is in 192.168.100.0/24 on VLAN 100.
  storage_vlan   = 100
  storage_subnet = "192.168.100.0/24"

  # Host => leaf, leaf port (SN2410 swp1..swp48 are the 25G ports) and host number in the subnet.
  storage_hosts = {
    stor01 = { leaf = "leaf1", port = "swp1", ip = 11, role = "target" }
    stor02 = { leaf = "leaf1", port = "swp2", ip = 12, role = "target" }
    app01  = { leaf = "leaf1", port = "swp3", ip = 21, role = "initiator" }
    app02  = { leaf = "leaf1", port = "swp4", ip = 22, role = "initiator" }
    stor03 = { leaf = "leaf2", port = "swp1", ip = 13, role = "target" }
    stor04 = { leaf = "leaf2", port = "swp2", ip = 14, role = "target" }
    app03  = { leaf = "leaf2", port = "swp3", ip = 23, role = "initiator" }
    app04  = { leaf = "leaf2", port = "swp4", ip = 24, role = "initiator" }
  }
}

# Spectrum-1 switches with a 16 MB shared packet buffer (datasheet figure; check yours). PFC
# headroom per lossless priority group per port: at 100G with a 10 m uplink the 802.1Qbb delay
# model (2 x 9 KB frames, PAUSE frame, interface and peer response delay, 2 x cable delay) needs
# about 60 KB; 96 KB leaves margin. Cumulus computes its own headroom; the number here is what
# lint checks the buffer budget (BUF-2) with, so keep it >= what `nv show qos buffer` shows.
switch "leaf" {
  for_each = toset(["leaf1", "leaf2"])
  name     = each.key

  platform    = "cumulus"
  address     = each.key == "leaf1" ? "10.0.0.11" : "10.0.0.12"
  credentials = "cumulus"
  role        = "leaf"

  forwarding      = "bridged" # the RoCEv1 default, written for the reader
  unknown_unicast = "drop"    # never flood lossless frames (SAFE-3)

  buffer {
    total    = "16MB"
    headroom = "96KB"
  }
}

switch "agg1" {
  platform    = "cumulus"
  address     = "10.0.0.21"
  credentials = "cumulus"
  # "aggregation" is not one of the roles fabctl places by itself (leaf/tor, spine,
  # superspine/core), so the Clos level is given: it sits above the leaves.
  role = "aggregation"
  tier = 2

  forwarding      = "bridged"
  unknown_unicast = "drop"

  buffer {
    total    = "16MB"
    headroom = "96KB"
  }
}

host "storage" {
  for_each = local.storage_hosts
  name     = each.key

  address     = "10.0.1.${each.value.ip}"
  credentials = "storage-hosts"
  sudo        = true
  role        = each.value.role

  # ConnectX-6 Dx, 2 x 25G, first port used. The RDMA interface is VLAN 100 on ens1f0; its
  # frames carry PCP 3 for RoCE, which is what the switches trust. fabctl makes that interface
  # (ip link add link ens1f0 name ens1f0.100 type vlan id 100) when it is missing, gives it the
  # addresses and MTU below and the egress-qos-map 2:3 3:3 (class "roce", priority 3 -> PCP 3, and
  # rdma_cm's skb priority 2 for rdma_tos 8 -> PCP 3), and
  # afterwards touches only what differs. The RoCEv1 GID the traffic test uses is the
  # "IB/RoCE v1" GID of ens1f0.100's address.
  nic "ens1f0" {
    device         = "mlx5_0"
    model          = "connectx-6dx"
    speed          = "25G"
    vlan           = local.storage_vlan
    vlan_interface = "ens1f0.${local.storage_vlan}" # the default, written for the reader
    addresses      = ["${cidrhost(local.storage_subnet, each.value.ip)}/24"]
    # trust (pcp) and pfc (priority 3) follow the fabric; ecn follows congestion_control
    # "pfc-only" and is off.
  }
}

# In-rack DAC to the leaf, VLAN-tagged (vlan_tags = 1: every frame is 4 bytes longer than the
# IP MTU suggests, which the MTU check accounts for).
link {
  for_each     = local.storage_hosts
  endpoints    = ["${each.value.leaf}:${each.value.port}", "${each.key}:ens1f0"]
  speed        = "25G"
  cable_length = "3m"
  vlan_tags    = 1
}

# Leaf uplinks: first 100G port (swp49 on the SN2410) to the aggregation switch, VLAN 100
# trunked, so also one tag.
link {
  for_each     = { leaf1 = "swp1", leaf2 = "swp2" }
  endpoints    = ["${each.key}:swp49", "agg1:${each.value}"]
  speed        = "100G"
  cable_length = "10m"
  vlan_tags    = 1
}

# Storage traffic is reads from the targets; 85 % of 25G is what RC READ of 128 KiB blocks
# reaches on a clean path with PFC-only flow control.
validate "storage-read" {
  pattern       = "all-pairs"
  op            = "read"
  message_size  = "128KiB"
  duration      = "10s"
  class         = "roce"
  min_bandwidth = "85%"
}

validate "storage-latency" {
  pattern      = "all-pairs"
  op           = "send"
  message_size = "8B"
  iterations   = 10000
  class        = "roce"
  max_p99      = "20us"
}
