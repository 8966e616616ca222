# HOST-7 pass: RoCEv1 on VLAN 100 with ToS 24: rt_tos2priority gives skb
# priority 4, which no class uses, and fabctl's egress map sends it to the
# RDMA PCP 3.
fabric "t" {
  transport          = "rocev1"
  trust              = "pcp"
  congestion_control = "pfc-only"
  rdma_tos           = 24
}

class "roce" {
  role      = "rdma"
  priority  = 3
  lossless  = true
  bandwidth = 50
}

class "default" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 50
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/24"]
    vlan      = 100
  }
}
