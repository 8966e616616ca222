# HOST-7 fail: RoCEv1 with ToS 0 (skb priority 0: the 0:3 egress entry
# moves every default-priority packet on the VLAN to the RDMA PCP); h2's
# ToS 8 maps to skb priority 2, a lossy class's; h3's NIC has no VLAN.
fabric "t" {
  transport          = "rocev1"
  trust              = "pcp"
  congestion_control = "pfc-only"
}

class "roce" {
  role      = "rdma"
  priority  = 3
  lossless  = true
  bandwidth = 50
}

class "bulk" {
  role      = "other"
  priority  = 2
  bandwidth = 20
}

class "default" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 30
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" { # expect: HOST-7
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/24"]
    vlan      = 100
  }
}

host "h2" {
  address  = "192.0.2.11"
  rdma_tos = 8 # expect: HOST-7
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.2/24"]
    vlan      = 100
  }
}

host "h3" {
  address  = "192.0.2.12"
  rdma_tos = 24
  nic "eth1" { # expect: HOST-7
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.3/24"]
  }
}
