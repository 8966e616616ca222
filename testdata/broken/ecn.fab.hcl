# Broken on purpose: ECN rules.
#   ECN-1  an ECN profile whose min is not below its max
#   ECN-2  ECN marking that starts above the switch's PFC XOFF threshold
#          (PAUSE fires before any packet is marked, so DCQCN never acts)
#   ECN-3  DCQCN with a lossless RDMA class that has no ECN profile
fabric "pod1" {
  transport          = "rocev2"
  mtu                = 9000
  rdma_mtu           = 4096
  congestion_control = "dcqcn"
}

class "rdma" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  lossless  = true
  bandwidth = 60
  ecn {
    min         = "1500KB" # expect: ECN-1, ECN-2
    max         = "150KB"
    probability = "10%"
  }
}

class "storage" { # expect: ECN-3
  role      = "rdma"
  priority  = 4
  dscp      = [28]
  lossless  = true
  bandwidth = 20
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
  bandwidth = 20
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  buffer {
    xoff = "100KB"
  }
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
  endpoints    = ["leaf1:Ethernet8", "gpu02:ens1f0"]
  speed        = "400G"
  cable_length = "3m"
}
