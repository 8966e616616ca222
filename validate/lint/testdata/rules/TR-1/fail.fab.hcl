# TR-1 fail: a routed switch cuts the RoCEv1 L2 domain, and one host sits
# in another subnet than the rest.
fabric "t" {
  transport = "rocev1"
  rdma_tos  = 24 # rdma_cm skb priority 4 (HOST-7)
}

switch "leaf1" {
  platform        = "sonic"
  address         = "192.0.2.1"
  role            = "leaf"
  unknown_unicast = "drop"
}

switch "spine1" {
  platform        = "sonic"
  address         = "192.0.2.2"
  role            = "spine"
  forwarding      = "routed" # expect: TR-1
  unknown_unicast = "drop"
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/24"]
    vlan      = 100
  }
}

host "h2" {
  address = "192.0.2.11"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.2/24"]
    vlan      = 100
  }
}

host "h3" {
  address = "192.0.2.12"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.1.3/24"] # expect: TR-1
    vlan      = 100
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
  vlan_tags    = 1
}

link {
  endpoints    = ["leaf1:Ethernet4", "h2:eth1"]
  speed        = "100G"
  cable_length = "3m"
  vlan_tags    = 1
}

link {
  endpoints    = ["spine1:Ethernet4", "h3:eth1"]
  speed        = "100G"
  cable_length = "3m"
  vlan_tags    = 1
}

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
  vlan_tags    = 1
}
