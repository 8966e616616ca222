# HOST-6 fail: a lossy RoCEv1 class: no PFC, and no ECN can reach frames
# without an IP header, so DCQCN cannot run either.
fabric "t" {
  transport          = "rocev1"
  trust              = "pcp"
  congestion_control = "pfc-only"
  rdma_tos           = 24
}

class "roce" {
  role      = "rdma"
  priority  = 3
  lossless  = false # expect: HOST-6
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
