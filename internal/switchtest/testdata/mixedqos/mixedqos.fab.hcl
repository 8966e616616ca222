# Test spec of the switch drivers' several-QoS-profiles support: one leaf
# per SSH CLI platform whose ports do not share one QoS shape, the usual
# reason being that host-facing and fabric-facing ports differ:
#
#   uplink   fabric-facing, to the spine: PFC on the lossless class, no PFC
#            watchdog (the watchdog guards the edge, where a NIC can storm)
#   gpu      host-facing RoCE NIC: the fabric defaults (PFC 3 + watchdog)
#   storage  host-facing, lossy TCP/NFS: no PFC
#   legacy   host-facing RoCEv1-style NIC classified by VLAN PCP: trust pcp
#
# RoCEv2 defaults otherwise (roce DSCP 26 -> priority 3 lossless, ECN
# 150KB/1.5MB/100%; cnp DSCP 48 -> priority 6 strict; ETS 50/50; watchdog
# 200ms/400ms/100ms, drop).

fabric "mixedqos" {
  transport = "rocev2"
  mtu       = 9000
  rdma_mtu  = 4096
}

credentials "lab-ssh" {
  username = "admin"
  password = env("FABCTL_TESTBED_PASSWORD")
}

switch "spine1" {
  platform    = "sonic"
  address     = "127.0.0.30:2222"
  credentials = "lab-ssh"
  role        = "spine"
}

locals {
  # Port names per leaf, as each NOS names its front-panel ports.
  leaves = {
    leaf-eos = { n = 0, platform = "eos", addr = "127.0.0.31:2222", spine = "Ethernet0", ports = ["Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4"] }
    leaf-nx  = { n = 1, platform = "nxos", addr = "127.0.0.32:2222", spine = "Ethernet4", ports = ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3", "Ethernet1/4"] }
    leaf-cl  = { n = 2, platform = "cumulus", addr = "127.0.0.33:2222", spine = "Ethernet8", ports = ["swp1", "swp2", "swp3", "swp4"] }
  }
  # What differs per port role (port attributes left null keep the defaults).
  port_qos = {
    uplink  = { pfc = null, pfc_watchdog = false, trust = null, description = "fabric-facing: to spine1", ignore = { "SAFE-1" = "fabric-facing: the watchdog guards the host edge" } }
    gpu     = { pfc = null, pfc_watchdog = null, trust = null, description = "host-facing: GPU RoCE NIC", ignore = {} }
    storage = { pfc = [], pfc_watchdog = null, trust = null, description = "host-facing: lossy storage frontend", ignore = { "QOS-1" = "storage frontend: TCP/NFS, no RoCE" } }
    legacy  = { pfc = null, pfc_watchdog = null, trust = "pcp", description = "host-facing: VLAN PCP classified NIC", ignore = { "QOS-2" = "the legacy NIC marks VLAN PCP only" } }
  }
  roles = ["uplink", "gpu", "storage", "legacy"]
  nic_ignore = {
    gpu     = {}
    storage = { "HOST-3" = "storage frontend: TCP/NFS, no RoCE" }
    legacy  = { "HOST-3" = "the legacy NIC marks VLAN PCP only", "QOS-2" = "the legacy NIC marks VLAN PCP only" }
  }
  hosts = merge([
    for leaf, l in local.leaves : {
      for i, role in slice(local.roles, 1, 4) : "${leaf}-${role}" => { leaf = leaf, port = l.ports[i + 1], role = role, net = l.n * 4 + i }
    }
  ]...)
}

switch "leaf" {
  for_each    = local.leaves
  name        = each.key
  platform    = each.value.platform
  address     = each.value.addr
  credentials = "lab-ssh"
  role        = "leaf"

  dynamic "port" {
    for_each = local.roles
    labels   = [each.value.ports[port.key]]

    content {
      pfc          = local.port_qos[port.value].pfc
      pfc_watchdog = local.port_qos[port.value].pfc_watchdog
      trust        = local.port_qos[port.value].trust
      description  = local.port_qos[port.value].description
      lint_ignore  = local.port_qos[port.value].ignore
    }
  }
}

host "h" {
  for_each = local.hosts
  name     = each.key
  connect  = "netns:fab-${each.key}"
  role     = "test"

  nic "eth1" {
    device      = "rxe0"
    model       = "rxe"
    addresses   = ["${cidrhost(cidrsubnet("198.18.0.0/24", 7, each.value.net), 1)}/31"]
    pfc         = each.value.role == "storage" ? [] : [3]
    trust       = each.value.role == "legacy" ? "pcp" : "dscp"
    lint_ignore = local.nic_ignore[each.value.role]
  }
}

link {
  for_each     = local.leaves
  endpoints    = ["${each.key}:${each.value.ports[0]}", "spine1:${each.value.spine}"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  for_each     = local.hosts
  endpoints    = ["${each.value.leaf}:${each.value.port}", "${each.key}:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
