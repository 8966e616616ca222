# MTU-1 fail: a port below its host, two hosts cabled back to back that
# differ, and a switch-wide override that mismatches both routed uplinks
# (a warning, reported once).
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"

  port "Ethernet0" {
    mtu = 4500 # expect: MTU-1
  }
  port "Ethernet4" {}
  port "Ethernet48" {}
  port "Ethernet52" {}
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
  role     = "spine"
  mtu      = 9216 # expect: MTU-1
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
    mtu       = 4200
  }
  nic "eth2" {
    device    = "mlx5_1"
    model     = "connectx-7"
    addresses = ["10.0.1.1/31"]
    mtu       = 4500 # expect: MTU-1
  }
}

host "h3" {
  address = "192.0.2.12"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.1.0/31"]
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
  vlan_tags    = 1
}

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}

link {
  endpoints    = ["leaf1:Ethernet52", "spine1:Ethernet4"]
  speed        = "400G"
  cable_length = "10m"
}

link {
  endpoints    = ["h2:eth2", "h3:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
