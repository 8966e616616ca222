# Broken on purpose: buffer rules.
#   BUF-1  declared PFC headroom below what a 400G port with a 3 m cable and
#          9000-byte MTU needs (802.1Qbb delay model)
#   BUF-2  the headroom of all lossless ports does not fit in the buffer
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
  buffer {
    total    = "768KB" # expect: BUF-2
    reserved = "512KB"
    headroom = "64KB" # expect: BUF-1
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
