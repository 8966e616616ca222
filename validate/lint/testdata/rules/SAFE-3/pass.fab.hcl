# SAFE-3 pass: the bridged switch drops unknown unicast; a bridged switch
# whose ports have PFC off carries no lossless traffic to flood.
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform        = "sonic"
  address         = "192.0.2.1"
  forwarding      = "bridged"
  unknown_unicast = "drop"
}

switch "mgmt1" {
  platform   = "sonic"
  address    = "192.0.2.2"
  forwarding = "bridged"
  pfc        = []
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
  endpoints    = ["leaf1:Ethernet4", "h2:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
