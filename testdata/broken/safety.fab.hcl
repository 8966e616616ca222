# Broken on purpose: safety rules.
#   SAFE-1  the PFC watchdog is off on lossless ports
#   SAFE-2  a leaf-to-leaf link closes a cycle of PFC buffer dependencies
#           (leaf1 -> leaf2 -> spine1 -> leaf1): a PFC deadlock is possible
#   SAFE-3  a bridged switch carrying a lossless class floods unknown unicast
fabric "pod1" {
  transport          = "rocev2"
  mtu                = 9000
  rdma_mtu           = 4096
  congestion_control = "dcqcn"

  pfc_watchdog {
    enabled = false # expect: SAFE-1
  }
}

class "rdma" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  lossless  = true
  bandwidth = 60
  ecn {
    min         = "150KB"
    max         = "1500KB"
    probability = "10%"
  }
}

class "cnp" {
  role     = "cnp"
  priority = 6
  dscp     = [48]
  strict   = true
}

class "other" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 40
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
}

switch "leaf2" {
  platform = "sonic"
  address  = "192.0.2.2"
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.3"
  role     = "spine"
}

# An L2 island for gpu02, outside the routed Clos.
switch "tor9" {
  platform        = "sonic"
  address         = "192.0.2.9"
  forwarding      = "bridged"
  unknown_unicast = "flood" # expect: SAFE-3
}

host "gpu01" {
  address = "192.0.2.11"
  nic "ens1f0" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
}

host "gpu02" {
  address = "192.0.2.12"
  nic "ens1f0" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.3/31"]
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "gpu01:ens1f0"]
  speed        = "400G"
  cable_length = "3m"
}

link {
  endpoints    = ["tor9:Ethernet0", "gpu02:ens1f0"]
  speed        = "400G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}

link {
  endpoints    = ["leaf2:Ethernet48", "spine1:Ethernet8"]
  speed        = "400G"
  cable_length = "10m"
}

link {
  endpoints    = ["leaf1:Ethernet56", "leaf2:Ethernet56"] # expect: SAFE-2
  speed        = "400G"
  cable_length = "1m"
}
