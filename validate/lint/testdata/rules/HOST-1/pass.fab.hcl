# HOST-1 pass: sizing within the E810's limits on h1 (the smaller NIC of
# the two decides) and a CQ that holds every outstanding work request; h2's
# NIC has unknown limits and is not checked.
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
  role     = "spine"
}

host "h1" {
  address = "192.0.2.10"
  qp {
    max_send_wr = 4063
    max_recv_wr = 4063
    max_sge     = 13
    max_inline  = 101
    cq_depth    = 8126
  }
  nic "eth1" {
    device    = "irdma0"
    model     = "e810"
    addresses = ["10.0.0.1/31"]
  }
  nic "eth2" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.1.1/31"]
  }
}

host "h2" {
  address = "192.0.2.11"
  qp {
    max_send_wr = 65536
    cq_depth    = 70000
  }
  nic "eth1" {
    device    = "bnxt_re0"
    addresses = ["10.0.0.3/31"]
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet4", "h2:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}
