# InfiniBand HPC cluster: 16 compute nodes, 4 storage nodes and a head node running the subnet
# manager, one NDR (400G) fabric.
#
# What is different from Ethernet: InfiniBand is lossless by design (credit-based link-level
# flow control), so there is no PFC, no ECN profile, no DSCP, no PFC watchdog and no headroom
# to size. QoS is service levels (SL) mapped to virtual lanes (VL) and weighted VL arbitration,
# all of which the subnet manager (OpenSM) programs into every switch and HCA; isolation is
# partitions (P_Keys). The spec says it in the infiniband block at the bottom.
#
# What this spec does not contain: the InfiniBand switches and the cables. fabctl's switch
# platforms are Ethernet NOSes (sonic, cumulus, eos, nxos, srlinux, openconfig) and a link
# needs a declared switch or host at each end, so the IB switches (Quantum-2 QM9700, managed
# by the SM, not by CLI) cannot be modelled yet. The spec therefore covers what fabctl manages
# on an IB fabric today: hosts, HCAs, SM settings, partitions and traffic tests. Topology lint
# (paths, deadlock, cable lengths) has nothing to check here.
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
      addresses = ["10.${20 + nic.key}.0.${each.value.n}/16"] # ib0 in 10.20/16, ib1 in 10.21/16
      guid      = format("0x0c42a1030000%02x%02x", each.value.n, nic.key + 1)
    }
  }
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
