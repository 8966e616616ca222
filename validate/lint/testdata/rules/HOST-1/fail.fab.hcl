# HOST-1 fail: h1's queues exceed its Intel E810 (max_qp_wr 4063, max_sge
# 13, inline 101), and its CQ is shallower than send + receive queues; h2's
# limits block lowers max_qp_wr below its receive queue.
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
    max_send_wr = 8192 # expect: HOST-1
    max_recv_wr = 1024
    max_sge     = 16 # expect: HOST-1
    max_inline  = 256 # expect: HOST-1
    cq_depth    = 4096 # expect: HOST-1
  }
  nic "eth1" {
    device    = "irdma0"
    model     = "e810"
    addresses = ["10.0.0.1/31"]
  }
}

host "h2" {
  address = "192.0.2.11"
  qp {
    max_recv_wr = 2048 # expect: HOST-1
    cq_depth    = 8192
  }
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.3/31"]
    limits {
      max_qp_wr = 1024
    }
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
