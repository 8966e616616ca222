# Broken on purpose: MTU rules.
#   MTU-1  the two ends of a cable disagree on the IP MTU
#   MTU-2  an RDMA MTU that is not an IB MTU (256..4096, powers of two)
#   MTU-3  a NIC whose IP MTU cannot carry the RDMA MTU plus RoCE headers
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
  port "Ethernet0" {
    mtu = 1500 # expect: MTU-1
  }
  port "Ethernet8" {
    mtu = 4150
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
    # Both ends agree (4150), but mlx5 needs 4096 + 96 for a 4096 active MTU.
    mtu = 4150 # expect: MTU-3
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

# The fabric's rdma_mtu is valid (MTU-3 is only checked then); the bad IB
# MTU is on a partition, in an infiniband block an Ethernet fabric ignores.
infiniband { # expect: TR-4
  partition "storage" {
    pkey    = "0x8001"
    members = ["gpu01:ens1f0"]
    mtu     = 3000 # expect: MTU-2
  }
}
