# Broken on purpose: transport rules of a RoCEv2 fabric.
#   TR-2  RoCEv2 does not reach every hop: an ACL denies UDP 4791, and a
#         switch remarks the RDMA class's DSCP
#   TR-5  RoCEv2 without any flow control: no lossless class and no
#         ECN-based congestion control
# (TR-1, TR-3 and TR-4 are about RoCEv1, iWARP and InfiniBand fabrics; one
# spec has one transport.)
fabric "pod1" {
  transport          = "rocev2"
  mtu                = 9000
  rdma_mtu           = 4096
  congestion_control = "none" # expect: TR-5
}

class "rdma" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  bandwidth = 60
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
  platform    = "sonic"
  address     = "192.0.2.1"
  remark_dscp = { "26" = 0 } # expect: TR-2

  acl "no-udp-high" {
    action    = "deny"
    protocol  = "udp"
    dst_ports = ["1024-65535"] # expect: TR-2
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
