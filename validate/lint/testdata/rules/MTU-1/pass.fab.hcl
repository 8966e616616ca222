# MTU-1 pass: overrides at port, switch and NIC level that agree end to
# end; a VLAN-tagged link adds 4 bytes on both ends alike; switch ports
# larger than the hosts they face (a port at 9216, a NIC at 4200 facing a
# port without mtu) and a bridged switch-to-switch link whose ends differ.
fabric "t" {
  transport = "rocev2"
  mtu       = 9000
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"

  port "Ethernet0" {
    mtu = 9000
  }
  port "Ethernet4" {}
  port "Ethernet8" {
    mtu = 9216
  }
  port "Ethernet12" {}
  port "Ethernet48" {}
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
  role     = "spine"
  mtu      = 9000
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
    mtu       = 9000
  }
}

host "h2" {
  address = "192.0.2.11"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.3/31"]
    vlan      = 100
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

host "h3" {
  address = "192.0.2.12"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.5/31"]
  }
}

host "h4" {
  address = "192.0.2.13"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.7/31"]
    mtu       = 4200
  }
}

link {
  endpoints    = ["leaf1:Ethernet8", "h3:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet12", "h4:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

switch "l2a" {
  platform        = "sonic"
  address         = "192.0.2.21"
  role            = "leaf"
  forwarding      = "bridged"
  unknown_unicast = "drop"
  mtu             = 9216
}

switch "l2b" {
  platform        = "sonic"
  address         = "192.0.2.22"
  role            = "spine"
  forwarding      = "bridged"
  unknown_unicast = "drop"
}

link {
  endpoints    = ["l2a:Ethernet0", "l2b:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}
