# Broken on purpose: QoS rules.
#   QOS-1  a lossless priority without PFC on a switch end of a link
#   QOS-2  the two ends of a link trust different fields
#   QOS-3  a switch DSCP map that differs from the classes
#   QOS-4  the CNP class is not strict priority, and is lossless
#   QOS-5  more lossless priorities on a port than max_lossless_priorities
#   QOS-6  PFC and 802.3x global pause on one port
#   QOS-7  ETS shares that do not sum to 100; a lossless class without one
#   QOS-8  a host's RDMA ToS that lands outside the RDMA classes
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
    min         = "150KB"
    max         = "1500KB"
    probability = "10%"
  }
}

class "cnp" { # expect: QOS-4, QOS-7, PLAT-1
  role     = "cnp"
  priority = 6
  dscp     = [48]
  lossless = true # expect: QOS-4
}

class "other" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 30 # expect: QOS-7
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  dscp_map = { "26" = 0 } # expect: QOS-3
  port "Ethernet0" {
    pause = true # expect: QOS-6
  }
  port "Ethernet8" {
    trust = "pcp" # expect: QOS-2
  }
  port "Ethernet16" {
    pfc = [1, 2, 3] # expect: QOS-1, QOS-5
  }
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
  role     = "spine"
  port "Ethernet0" {
    pfc = [] # expect: QOS-1
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
  address  = "192.0.2.12"
  rdma_tos = 0 # expect: QOS-8, ECN-4
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

link {
  endpoints    = ["leaf1:Ethernet16", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}
