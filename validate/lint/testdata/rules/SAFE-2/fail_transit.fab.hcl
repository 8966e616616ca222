# SAFE-2 fail: host gw forwards between its NICs on two leaves (host
# transit): traffic from leaf1 goes through gw up into leaf2 and back.
fabric "t" {
  transport = "rocev2"
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "spine"
}

switch "spine2" {
  platform = "sonic"
  address  = "192.0.2.2"
  role     = "spine"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.3"
  role     = "leaf"
}

switch "leaf2" {
  platform = "sonic"
  address  = "192.0.2.4"
  role     = "leaf"
}

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}

link {
  endpoints    = ["leaf1:Ethernet52", "spine2:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}

link {
  endpoints    = ["leaf2:Ethernet48", "spine1:Ethernet4"]
  speed        = "400G"
  cable_length = "10m"
}

link {
  endpoints    = ["leaf2:Ethernet52", "spine2:Ethernet4"]
  speed        = "400G"
  cable_length = "10m"
}

host "gw" {
  address    = "192.0.2.10"
  forwarding = true
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
  nic "eth2" {
    device    = "mlx5_1"
    model     = "connectx-7"
    addresses = ["10.0.1.1/31"]
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "gw:eth1"] # expect: SAFE-2
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf2:Ethernet0", "gw:eth2"]
  speed        = "100G"
  cable_length = "3m"
}
