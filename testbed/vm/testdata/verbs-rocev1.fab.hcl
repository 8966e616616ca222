# Two soft-RoCE "hosts" whose RDMA interface is VLAN 100 (fa.100, fb.100), RoCEv1-style: no ToS,
# the class travels in the PCP that rdma_cm picks from the VLAN egress map.
fabric "vmrocev1" {
  transport          = "rocev1"
  trust              = "pcp"
  congestion_control = "pfc-only"
  mtu                = 1500
  rdma_mtu           = 1024
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

host "va" {
  connect = "local"
  nic "fa" {
    accept_not_in_effect = {
      "*" = "VM testbed: soft-RoCE and soft-iWARP on a veth have no DCB, DCQCN or buffer settings; what this spec proves is the RDMA path, its marking and the traffic test"
    }
    device    = "rxe_fa"
    model     = "rxe"
    vlan      = 100
    addresses = ["198.18.2.1/24"]
    speed     = "10G"
  }
}

host "vb" {
  connect = "local"
  nic "fb" {
    accept_not_in_effect = {
      "*" = "VM testbed: soft-RoCE and soft-iWARP on a veth have no DCB, DCQCN or buffer settings; what this spec proves is the RDMA path, its marking and the traffic test"
    }
    device    = "rxe_fb"
    model     = "rxe"
    vlan      = 100
    addresses = ["198.18.2.2/24"]
    speed     = "10G"
  }
}

validate "v1-write" {
  pattern       = "pairs"
  op            = "write"
  message_size  = "64KiB"
  iterations    = 300
  min_bandwidth = "10M"
}
