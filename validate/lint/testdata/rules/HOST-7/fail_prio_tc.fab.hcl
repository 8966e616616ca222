# HOST-7 fail: on an Intel E810 (ice) and a Broadcom (bnxt) NIC the driver
# sets a TC count on the netdev, so rdma_cm takes the SL from the NIC's
# prio->TC map (cma.c get_vlan_ndev_tc), not from the VLAN egress map:
# ToS 24 is skb priority 4, which no class uses, so ice has it on the
# lowest class's TC 0 (the classes on 0 and 3 are compacted to TCs 0, 1);
# bnxt never sets the map, so every priority is on TC 0. The ConnectX NIC
# takes the egress map fabctl writes (4:3) and passes.
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
  nic "eth1" { # expect: HOST-7
    device    = "irdma0"
    model     = "e810-cqda2"
    addresses = ["10.0.0.1/24"]
    vlan      = 100
  }
  nic "eth2" { # expect: HOST-7
    device    = "bnxt_re0"
    model     = "bcm57508"
    addresses = ["10.0.1.1/24"]
    vlan      = 100
  }
  nic "eth3" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.2.1/24"]
    vlan      = 100
  }
}
