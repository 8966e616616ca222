# InfiniBand HPC cluster: 16 compute nodes, 4 storage nodes and a head node running the subnet
# manager, one NDR (400G) fabric.
#
# What is different from Ethernet: InfiniBand is lossless by design (credit-based link-level
# flow control), so there is no PFC, no ECN profile, no DSCP, no PFC watchdog and no headroom
# to size. QoS is service levels (SL) mapped to virtual lanes (VL) and weighted VL arbitration,
# all of which the subnet manager (OpenSM) programs into every switch and HCA; isolation is
# partitions (P_Keys). The spec says it in the infiniband block at the bottom.
#
# The fabric is two leaves and two spines, NVIDIA Quantum-2 QM9700 (64 NDR ports each), platform
# "infiniband": the subnet manager programs them, so fabctl has no driver for them and never logs
# in; the spec gives their port counts and every cable at its width and speed. Lint checks the
# cabling (IB-5), that it carries the partitions and QoS (IB-6) and that it is a fat tree without
# credit loops (IB-7); `fabctl validate` discovers the fabric over MADs on the SM host (ibnetdiscover,
# smpquery, in one SSH session) and reports every missing, extra or miswired cable, link trained
# narrower or slower, P_Key, SL2VL, VL arbitration and MTU that differs, by switch and port; `fabctl
# plan` reads it back too (what opensm did not program is a change to apply). examples/ib-testbed is
# the same shape, small enough to simulate: ibsim 0.10 has no NDR and runs 2048-byte MTUs, so this
# NDR fabric at rdma_mtu 4096 is checked statically here and read back on real hardware.
#
#     spine1   spine2        leaf ports 49-56 go to spine1, 57-64 to spine2 (8 cables each)
#       |   \ /   |
#       |   / \   |
#     leaf1     leaf2        leaf1: sm01, cn01-cn12; leaf2: cn13-cn16 and both HCAs of st01-st04
#
# The subnet manager is a device of its own, sm.sm01 (driver opensm): fabctl writes its
# partitions.conf and qos-policy.conf and the QoS lines of opensm.conf over SSH and signals
# opensm to reread them; the host driver reports each HCA port's state, rate, P_Keys, GUID
# and active MTU against what the partitions below expect.
#
#   fabctl validate --static examples/infiniband
#   fabctl render examples/infiniband --device sm.sm01    (the three opensm files)

fabric "hpc-ib" {
  transport = "infiniband"

  # IPoIB MTU. Datagram-mode IPoIB carries one IB packet's payload: the 4096-byte IB MTU minus
  # the 4-byte IPoIB header = 4092. (fabctl's default, 2044, matches a 2K IB MTU.)
  mtu      = 4092
  rdma_mtu = 4096

  # congestion_control defaults to "none" on InfiniBand: credits keep it lossless and the
  # fabric's own congestion control, if used, is an SM setting outside this spec.
}

# Classes on InfiniBand are service levels: sl is what matters; priority is required by the
# class schema but has no wire meaning on IB (it is kept equal to the SL for readability), and
# bandwidth documents the intended share that the VL arbitration weights below implement.
class "default" {
  role      = "other"
  priority  = 0
  sl        = 0
  default   = true # IPoIB, management, anything without an SL of its own
  bandwidth = 17
}

class "mpi" {
  role      = "rdma"
  priority  = 1
  sl        = 1 # UCX_IB_SL=1 / the MPI launcher's service level
  bandwidth = 50
}

class "storage" {
  role      = "rdma"
  priority  = 2
  sl        = 2 # the parallel file system's RDMA service level
  bandwidth = 33
}

credentials "cluster" {
  username    = "fabctl"
  private_key = file("/etc/fabctl/id_ed25519")
  known_hosts = "/etc/fabctl/known_hosts"
}

locals {
  compute = [for i in range(16) : format("cn%02d", i + 1)]
  storage = [for i in range(4) : format("st%02d", i + 1)]

  # Every node: name => host number (management 10.0.1.x, IPoIB 10.20.0.x).
  ib_nodes = merge(
    { sm01 = { n = 1, role = "head", hcas = ["ib0"] } },
    { for i, h in local.compute : h => { n = 11 + i, role = "compute", hcas = ["ib0"] } },
    # Storage nodes have two HCAs: file system traffic from 16 clients needs more than 400G.
    { for i, h in local.storage : h => { n = 41 + i, role = "storage", hcas = ["ib0", "ib1"] } },
  )
}

host "node" {
  for_each = local.ib_nodes
  name     = each.key

  address     = "10.0.1.${each.value.n}"
  credentials = "cluster"
  sudo        = true
  role        = each.value.role

  # ConnectX-7 in InfiniBand mode (NDR, 400G). The netdev is the IPoIB interface; rdma_cm
  # needs its address to resolve peers. guid is the port GUID (ibstat -p): opensm's
  # partitions.conf names members by it, and the host driver checks it against the HCA.
  dynamic "nic" {
    for_each = each.value.hcas
    labels   = [nic.value]

    content {
      device    = "mlx5_${nic.key}"
      model     = "connectx-7"
      speed     = "400G"
      addresses = ["10.${20 + nic.key}.0.${each.value.n}/16"]           # ib0 in 10.20/16, ib1 in 10.21/16
      guid      = format("0x0c42a103%04x%02x01", each.value.n, nic.key) # port 1 of the HCA
    }
  }
}

switch "fabric" {
  for_each = { leaf1 = "leaf", leaf2 = "leaf", spine1 = "spine", spine2 = "spine" }
  name     = each.key
  platform = "infiniband"
  role     = each.value
  ports    = 64 # QM9700: 32 OSFP cages, 64 NDR ports
}

locals {
  # Every HCA port in cabling order: the first 13 on leaf1 ports 1-13, the rest on leaf2 ports 1-12.
  hca_ports = concat(["sm01:ib0"], [for h in local.compute : "${h}:ib0"], flatten([for h in local.storage : ["${h}:ib0", "${h}:ib1"]]))
}

link {
  for_each  = { for i, ep in local.hca_ports : ep => i }
  endpoints = [each.value < 13 ? "leaf1:${each.value + 1}" : "leaf2:${each.value - 12}", each.key]
  speed     = "NDR"
  width     = "4x"
}

link {
  for_each  = { for p in setproduct(["leaf1", "leaf2"], ["spine1", "spine2"], range(8)) : "${p[0]}-${p[1]}-${p[2]}" => p }
  endpoints = ["${each.value[0]}:${(each.value[1] == "spine1" ? 49 : 57) + each.value[2]}", "${each.value[1]}:${(each.value[0] == "leaf1" ? 1 : 9) + each.value[2]}"]
  speed     = "NDR"
  width     = "4x"
}

infiniband {
  # OpenSM runs on the head node (a managed switch or UFM could also be the SM; fabctl then
  # only reads the settings back).
  subnet_manager = "sm01"

  # SL -> VL for all 16 SLs: the three classes get their own VL, unused SLs fall back to VL0.
  # Most switch ports run 4 or 8 data VLs; VL0-2 fit on every one of them.
  sl2vl = [0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]

  # VL arbitration (OpenSM vlarb_high / vlarb_low, weights in units of 64 bytes). MPI's VL1 is
  # also in the high-priority table: small latency-critical messages jump the queue. The low
  # table splits the rest 1 : 3 : 2, the 17/50/33 of the classes above. With a 4 KB MTU one
  # packet is 64 credits, so weights are multiples of 64 (IB-2): a weight of 16 would still
  # send a whole 4 KB packet per turn and the shares would not hold.
  vl_arb_high = { "1" = 64 }
  vl_arb_low  = { "0" = 64, "1" = 192, "2" = 128 }

  # Compute partition: every compute node and the head node are full members and talk freely.
  partition "compute" {
    pkey    = "0x8001"
    members = concat([for h in local.compute : "${h}:ib0"], ["sm01:ib0"])
    mtu     = 4096
    rate    = "400G"
    sl      = 1
    ipoib   = true # an IPoIB interface for the partition (job launch, MPI wire-up)
  }

  # Storage partition: storage nodes are full members, compute nodes limited members - clients
  # can reach the servers but not each other through this partition.
  partition "storage" {
    pkey            = "0x8002"
    members         = flatten([for h in local.storage : ["${h}:ib0", "${h}:ib1"]])
    limited_members = [for h in local.compute : "${h}:ib0"]
    mtu             = 4096
    rate            = "400G"
    sl              = 2
  }
}

# NDR point to point reaches ~390 Gb/s of RDMA WRITE; 90 % of line rate leaves room for the
# switch hops and still catches a link trained at HDR (200G) or a degraded cable.
validate "mpi-bandwidth" {
  pattern       = "ring"
  op            = "write"
  message_size  = "1MiB"
  duration      = "10s"
  class         = "mpi"
  hosts         = ["cn*"]
  min_bandwidth = "90%"
}

validate "mpi-latency" {
  pattern      = "all-pairs"
  op           = "send"
  message_size = "8B"
  iterations   = 10000
  class        = "mpi"
  hosts        = ["cn*"]
  max_p99      = "5us"
}
