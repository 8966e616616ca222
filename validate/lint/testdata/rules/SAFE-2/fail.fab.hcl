# SAFE-2 fail: a lossless leaf-leaf link in a Clos: down to leaf1, across,
# and up again from leaf2 closes a buffer dependency cycle.
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

link {
  endpoints    = ["leaf1:Ethernet60", "leaf2:Ethernet60"] # expect: SAFE-2
  speed        = "400G"
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
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf2:Ethernet0", "h2:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
