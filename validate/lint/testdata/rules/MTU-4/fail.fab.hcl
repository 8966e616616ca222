# MTU-4 fail: hosts at 9000 with RDMA MTU 4096; one leaf-spine link is
# 1500 on both ends (consistent, so MTU-1 passes) and drops every RoCE
# packet between the leaves; another is 8000 (RDMA fits, TCP does not).
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"

  port "Ethernet0" {}
  port "Ethernet48" {
    mtu = 1500 # expect: MTU-4
  }
}

switch "leaf2" {
  platform = "sonic"
  address  = "192.0.2.3"
  role     = "leaf"

  port "Ethernet0" {}
  port "Ethernet48" {
    mtu = 8000 # expect: MTU-4
  }
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
  role     = "spine"

  port "Ethernet0" {
    mtu = 1500
  }
  port "Ethernet4" {
    mtu = 8000
  }
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
}

host "h2" {
  address = "192.0.2.11"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.3/31"]
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf2:Ethernet0", "h2:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}

link {
  endpoints    = ["leaf2:Ethernet48", "spine1:Ethernet4"]
  speed        = "400G"
  cable_length = "10m"
}
