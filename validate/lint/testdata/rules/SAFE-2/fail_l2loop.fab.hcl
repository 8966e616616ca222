# SAFE-2 fail: three bridged switches in a triangle carry lossless traffic:
# an L2 loop is a dependency cycle whatever spanning tree does later.
fabric "t" {
  transport = "rocev2"
}

switch "sw1" {
  platform        = "sonic"
  address         = "192.0.2.1"
  forwarding      = "bridged"
  unknown_unicast = "drop"
}

switch "sw2" {
  platform        = "sonic"
  address         = "192.0.2.2"
  forwarding      = "bridged"
  unknown_unicast = "drop"
}

switch "sw3" {
  platform        = "sonic"
  address         = "192.0.2.3"
  forwarding      = "bridged"
  unknown_unicast = "drop"
}

link {
  endpoints    = ["sw1:Ethernet48", "sw2:Ethernet48"] # expect: SAFE-2
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["sw2:Ethernet52", "sw3:Ethernet52"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["sw3:Ethernet56", "sw1:Ethernet56"]
  speed        = "100G"
  cable_length = "3m"
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
  endpoints    = ["sw1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["sw2:Ethernet0", "h2:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
