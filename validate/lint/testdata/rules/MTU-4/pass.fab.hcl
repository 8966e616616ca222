# MTU-4 pass: every leaf-spine hop carries the hosts' 9000-byte packets
# (9216 on the switch-to-switch links is above what the hosts send).
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"

  port "Ethernet0" {}
  port "Ethernet48" {
    mtu = 9216
  }
}

switch "leaf2" {
  platform = "sonic"
  address  = "192.0.2.3"
  role     = "leaf"

  port "Ethernet0" {}
  port "Ethernet48" {
    mtu = 9216
  }
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
  role     = "spine"

  port "Ethernet0" {
    mtu = 9216
  }
  port "Ethernet4" {
    mtu = 9216
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
