# HOST-2 fail: h1 pins node-0 NIC work onto node-1 CPUs, h2's NIC names a
# node the host does not declare, h3's CPU list spans both nodes.
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
  address    = "192.0.2.10"
  numa_nodes = { "0" = "0-15", "1" = "16-31" }
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
    numa_node = 0
    numa      = "0-7,16-19" # expect: HOST-2
  }
}

host "h2" {
  address    = "192.0.2.11"
  numa_nodes = { "0" = "0-15", "1" = "16-31" }
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.3/31"]
    numa_node = 2 # expect: HOST-2
  }
}

host "h3" {
  address    = "192.0.2.12"
  numa_nodes = { "0" = "0-15", "1" = "16-31" }
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.5/31"]
    numa      = "12-20" # expect: HOST-2
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
  endpoints    = ["leaf1:Ethernet8", "h3:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}
