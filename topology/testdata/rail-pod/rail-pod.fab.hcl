# Two rail-optimised scalable units under one spine, as NVIDIA's DGX SuperPOD reference
# architecture cables them (each node's NIC n to its unit's rail-n leaf): su1 (leaves l0, l1)
# with g1-g3, su2 (leaves l2, l3) with g4 and g5. h9 has one NIC, on l0.
fabric "rail-pod" { transport = "rocev2" }

locals {
  su = {
    g1 = { leaves = ["l0", "l1"], n = 0 }
    g2 = { leaves = ["l0", "l1"], n = 1 }
    g3 = { leaves = ["l0", "l1"], n = 2 }
    g4 = { leaves = ["l2", "l3"], n = 0 }
    g5 = { leaves = ["l2", "l3"], n = 1 }
  }
  leaves = { l0 = 1, l1 = 2, l2 = 3, l3 = 4 }
}

switch "l0" {
  platform = "sonic"
  address  = "127.0.0.1"
  role     = "leaf"
}

switch "l1" {
  platform = "sonic"
  address  = "127.0.0.2"
  role     = "leaf"
}

switch "l2" {
  platform = "sonic"
  address  = "127.0.0.3"
  role     = "leaf"
}

switch "l3" {
  platform = "sonic"
  address  = "127.0.0.4"
  role     = "leaf"
}

switch "s0" {
  platform = "sonic"
  address  = "127.0.0.10"
  role     = "spine"
}

host "g1" {
  connect = "local"
  nic "e0" { addresses = ["10.0.0.1/31"] }
  nic "e1" { addresses = ["10.1.0.1/31"] }
}

host "g2" {
  connect = "local"
  nic "e0" { addresses = ["10.0.1.1/31"] }
  nic "e1" { addresses = ["10.1.1.1/31"] }
}

host "g3" {
  connect = "local"
  nic "e0" { addresses = ["10.0.2.1/31"] }
  nic "e1" { addresses = ["10.1.2.1/31"] }
}

host "g4" {
  connect = "local"
  nic "e0" { addresses = ["10.2.0.1/31"] }
  nic "e1" { addresses = ["10.3.0.1/31"] }
}

host "g5" {
  connect = "local"
  nic "e0" { addresses = ["10.2.1.1/31"] }
  nic "e1" { addresses = ["10.3.1.1/31"] }
}

host "h9" {
  connect = "local"
  nic "e0" { addresses = ["10.9.0.1/31"] }
}

link {
  for_each  = local.su
  endpoints = ["${each.value.leaves[0]}:Ethernet${each.value.n * 4}", "${each.key}:e0"]
  speed     = "400G"
}

link {
  for_each  = local.su
  endpoints = ["${each.value.leaves[1]}:Ethernet${each.value.n * 4}", "${each.key}:e1"]
  speed     = "400G"
}

link {
  endpoints = ["l0:Ethernet40", "h9:e0"]
  speed     = "400G"
}

link {
  for_each  = local.leaves
  endpoints = ["${each.key}:Ethernet64", "s0:Ethernet${each.value * 4}"]
  speed     = "400G"
}
