# A two-device fabric whose long cable draws a lint warning: plan shows
# lint findings with the plan and still plans.
fabric "lintcase" {
  transport = "rocev2"
  mtu       = 9000
  rdma_mtu  = 4096
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["10.0.0.1/31"]
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "300m"
}
