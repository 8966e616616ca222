# InfiniBand testbed: a small fat tree that `fabctl testbed up` runs as a simulated subnet on one
# machine (ibsim from Debian's ibsim-utils, with the real opensm and infiniband-diags under
# libumad2sim; needs root). `make demo-ib` runs the whole job against it: testbed up, validate
# --static, plan (opensm at its defaults: fabctl's partitions and QoS are missing), apply (fabctl
# writes opensm's files and sends it SIGHUP), validate (the fabric read back over MADs: cabling,
# widths, speeds, MTU, P_Keys, SL2VL, VL arbitration), re-plan clean, a fault, testbed down.
#
#         spine1          spine2         (infiniband, 8 ports; HDR 4x everywhere)
#          |    \        /    |
#          |     \      /     |
#        leaf1          leaf2
#       /  |  \        /  |  \
#    sm01 cn01 cn02  cn03 cn04
#
# What ibsim cannot do shapes the spec: its ports run a 2048-byte MTU and VL0-7, and it has no NDR,
# so this fabric is HDR with rdma_mtu 2048 (examples/infiniband is the NDR production shape).
#
# The adapters have no operating system here: the hosts are connect = "none" (fabctl never logs
# in; they are cabling, GUIDs and partition membership). The subnet manager runs on this machine
# (sm_connect = "local"), with its files in the testbed directory.
#
#   fabctl testbed up examples/ib-testbed
#   fabctl validate examples/ib-testbed --skip-traffic

fabric "ib-testbed" {
  transport = "infiniband"
  mtu       = 2044
  rdma_mtu  = 2048
}

class "default" {
  role     = "other"
  priority = 0
  sl       = 0
  default  = true
}

class "mpi" {
  role     = "rdma"
  priority = 1
  sl       = 1
}

class "storage" {
  role     = "rdma"
  priority = 2
  sl       = 2
}

switch "spine1" {
  platform = "infiniband"
  role     = "spine"
  ports    = 8
}

switch "spine2" {
  platform = "infiniband"
  role     = "spine"
  ports    = 8
}

switch "leaf1" {
  platform = "infiniband"
  role     = "leaf"
  ports    = 8
}

switch "leaf2" {
  platform = "infiniband"
  role     = "leaf"
  ports    = 8
}

locals {
  # host => [leaf, leaf port, host number]
  nodes = {
    sm01 = ["leaf1", 1, 1]
    cn01 = ["leaf1", 2, 11]
    cn02 = ["leaf1", 3, 12]
    cn03 = ["leaf2", 1, 13]
    cn04 = ["leaf2", 2, 14]
  }
}

host "node" {
  for_each = local.nodes
  name     = each.key
  connect  = "none"

  nic "ib0" {
    device = "mlx5_0"
    speed  = "200G"
    guid   = format("0x0c42a1030000%02x01", each.value[2])
  }
}

link {
  for_each  = local.nodes
  endpoints = ["${each.value[0]}:${each.value[1]}", "${each.key}:ib0"]
  speed     = "HDR"
  width     = "4x"
}

# Each leaf's ports 7 and 8 go up, one cable to each spine.
link {
  for_each  = { for p in setproduct(["leaf1", "leaf2"], ["spine1", "spine2"]) : "${p[0]}-${p[1]}" => p }
  endpoints = ["${each.value[0]}:${each.value[1] == "spine1" ? 7 : 8}", "${each.value[1]}:${each.value[0] == "leaf1" ? 1 : 2}"]
  speed     = "HDR"
  width     = "4x"
}

infiniband {
  subnet_manager  = "sm01"
  sm_connect      = "local"
  opensm_conf     = ".fabctl/testbed/ibsim/opensm/opensm.conf"
  opensm_pid_file = ".fabctl/testbed/ibsim/opensm.pid"
  # infiniband-diags on the simulated subnet (wrappers testbed up writes): plan, apply and validate
  # read the fabric back with them.
  diags_dir = ".fabctl/testbed/ibsim/bin"

  sl2vl       = [0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
  max_vls     = 4
  vl_arb_high = { "1" = 32 }
  vl_arb_low  = { "0" = 32, "1" = 96, "2" = 64 }

  partition "compute" {
    pkey    = "0x8001"
    members = ["cn01:ib0", "cn02:ib0", "cn03:ib0", "cn04:ib0", "sm01:ib0"]
    mtu     = 2048
    rate    = "200G"
    sl      = 1
    ipoib   = true
  }

  partition "storage" {
    pkey            = "0x8002"
    members         = ["cn03:ib0", "cn04:ib0"]
    limited_members = ["cn01:ib0", "cn02:ib0"]
    mtu             = 2048
    rate            = "200G"
    sl              = 2
  }
}
