# HOST-7 pass: an Intel E810 (ice) NIC, whose prio->TC map rdma_cm reads:
# the classes on priorities 0, 1 and 2 are compacted to TCs 0, 1, 2, and
# ToS 8 is skb priority 2, the RDMA class's, on TC 2: the SL is the RDMA
# class's priority.
fabric "t" {
  transport          = "rocev1"
  trust              = "pcp"
  congestion_control = "pfc-only"
  rdma_tos           = 8
}

class "roce" {
  role      = "rdma"
  priority  = 2
  lossless  = true
  bandwidth = 50
}

class "storage" {
  role      = "other"
  priority  = 1
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
  nic "eth1" {
    device    = "irdma0"
    model     = "e810-cqda2"
    addresses = ["10.0.0.1/24"]
    vlan      = 100
  }
}
