# Broken on purpose: host rules.
#   HOST-1  QP sizing beyond the NIC's limits (ConnectX-7: max_qp_wr 32768),
#           and a completion queue shallower than the work queues
#   HOST-2  a NIC pinned to CPUs of another NUMA node
#   HOST-3  a NIC whose PFC set differs from the fabric's lossless classes
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
}

host "gpu01" {
  address    = "192.0.2.11"
  numa_nodes = { "0" = "0-15", "1" = "16-31" }

  qp {
    max_send_wr = 65536 # expect: HOST-1
    cq_depth    = 1024  # expect: HOST-1
  }

  nic "ens1f0" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
    numa_node = 1
    numa      = "0-7" # expect: HOST-2
  }
}

host "gpu02" {
  address = "192.0.2.12"
  nic "ens1f0" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.3/31"]
    pfc       = [4] # expect: HOST-3
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
