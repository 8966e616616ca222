# iWARP storage cluster: NVMe over RDMA on Intel E810 NICs, two independent A/B planes.
#
# iWARP runs RDMA over TCP, and TCP recovers from loss by itself: the fabric needs no PFC, no
# lossless class, no headroom and no PFC watchdog. That is iWARP's selling point and this
# spec keeps it: classes give storage a guaranteed share and early ECN marks (TCP backs off on
# them), nothing more. (Enabling PFC for Intel iWARP would also require a VLAN on the RDMA
# interface - lint TR-3.)
#
# Topology: two separate planes like a Fibre Channel SAN. Every host has one port on plane A
# and one on plane B; NVMe multipath uses both and survives the loss of a whole plane. There is
# no link between the planes, so they share no failure domain.
#
#     sw-a (SONiC, 32 x 100G)           sw-b (SONiC, 32 x 100G)
#      |  |  |  ...  12 hosts             |  |  |  ...
#     ens1f0 of every host               ens1f1 of every host
#
#   fabctl validate --static examples/iwarp-storage

fabric "nvme-iwarp" {
  transport = "iwarp"

  # Jumbo frames: fewer TCP segments per 128 KiB I/O. rdma_mtu is an InfiniBand/RoCE notion
  # and does not apply to iWARP (TCP segments by MSS), so it is not set.
  mtu = 9000

  # The iWARP default: switches ECN-mark the storage queue, hosts run TCP with ECN. No DCQCN.
  congestion_control = "ecn-only"

  # The fabric-wide PFC watchdog default stays as it is: with no lossless class no port runs
  # PFC, so it has nothing to watch.
}

# Storage traffic: DSCP 26 (rdma_cm's ToS on the hosts marks the iWARP connections with it) on
# priority 3 with 60 % guaranteed under contention; everything else 40 %. Lossy on purpose.
class "storage" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  bandwidth = 60

  # RED in mark-only mode on the storage queue: TCP (with net.ipv4.tcp_ecn = 1) halves its
  # window on a mark instead of losing a segment and waiting for a retransmit timeout.
  ecn {
    min         = "150KB"
    max         = "1.5MB"
    probability = "100%"
  }
}

class "default" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 40
}

credentials "sonic" {
  username    = "admin"
  password    = env("SONIC_PASSWORD")
  known_hosts = "/etc/fabctl/known_hosts"
}

credentials "storage-hosts" {
  username    = "fabctl"
  private_key = file("/etc/fabctl/id_ed25519")
  known_hosts = "/etc/fabctl/known_hosts"
}

locals {
  planes = {
    # plane => switch, host NIC on it, /24 the plane's /31s come from
    a = { switch = "sw-a", nic = "ens1f0", prefix = "10.40.0.0/24", mgmt = "10.0.0.31" }
    b = { switch = "sw-b", nic = "ens1f1", prefix = "10.40.1.0/24", mgmt = "10.0.0.32" }
  }

  # 4 NVMe targets and 8 initiators; n is the host's index, which picks its switch port and
  # its /31 on each plane.
  nvme_hosts = merge(
    { for i in range(4) : format("nvme%02d", i + 1) => { n = i, role = "target" } },
    { for i in range(8) : format("app%02d", i + 1) => { n = i + 4, role = "initiator" } },
  )
}

# 100G SONiC switches (Tomahawk-class, 32 x 100G, ports Ethernet0, Ethernet4, ...). Routed:
# each host port is a /31 to its switch. No buffer block: with no lossless class there is no
# PFC headroom to budget.
switch "plane" {
  for_each = local.planes
  name     = each.value.switch

  platform    = "sonic"
  address     = each.value.mgmt
  credentials = "sonic"
  role        = "leaf"
}

# E810-2CQDA2: two controllers, so each of the two 100G ports has its own 100G (the single-
# controller E810-CQDA2 shares 100G between its ports). irdma runs iWARP by default on E810.
host "nvme" {
  for_each = local.nvme_hosts
  name     = each.key

  address     = cidrhost("10.0.1.0/24", 31 + each.value.n)
  credentials = "storage-hosts"
  sudo        = true
  role        = each.value.role

  # NVMe-oF queue pairs: 1024-deep queues with a few SGEs per I/O, inline for small
  # command capsules. The E810 allows max_qp_wr 4063, max_sge 13 and 101 bytes inline, so the
  # defaults of other vendors (e.g. 4096-deep, 256 B inline) would not fit; lint HOST-1 checks.
  qp {
    max_send_wr = 1024
    max_recv_wr = 1024
    max_sge     = 8
    max_inline  = 64
    cq_depth    = 4096 # >= send + recv WRs of one QP
  }

  dynamic "nic" {
    for_each = local.planes
    labels   = [nic.value.nic]

    content {
      model = "e810"
      speed = "100G"
      # device is left out: irdma's RDMA device names (irdma0, or iwp<pci> with rdma-core's
      # naming rules) are not stable across installs; the netdev is.
      addresses = ["${cidrhost(cidrsubnet(nic.value.prefix, 7, each.value.n), 1)}/31"]
    }
  }
}

# Host n on port Ethernet(4n) of each plane's switch; in-rack DAC.
link {
  for_each = merge([
    for host, h in local.nvme_hosts : {
      for plane, p in local.planes : "${host}:${plane}" => {
        host   = host
        nic    = p.nic
        switch = p.switch
        port   = "Ethernet${h.n * 4}"
      }
    }
  ]...)
  endpoints    = ["${each.value.switch}:${each.value.port}", "${each.value.host}:${each.value.nic}"]
  speed        = "100G"
  cable_length = "3m"
}

validate "nvme-write" {
  pattern       = "all-pairs"
  op            = "write"
  message_size  = "128KiB"
  duration      = "10s"
  qps           = 4
  class         = "storage"
  min_bandwidth = "80%" # iWARP's TCP stack in the NIC costs more than RoCE; 80 % is healthy
}

validate "nvme-latency" {
  pattern      = "all-pairs"
  op           = "send"
  message_size = "4KiB" # one NVMe block
  iterations   = 10000
  class        = "storage"
  max_p99      = "30us"
}
