# QOS-5 fail: PFC overrides on a port and a NIC enable three priorities
# (the NIC's also differs from the lossless classes: HOST-3).
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"

  port "Ethernet0" {
    pfc = [3, 4, 5] # expect: QOS-5
  }
  port "Ethernet4" {}
  port "Ethernet48" {}
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
  role     = "spine"
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
    pfc       = ["3-5"] # expect: QOS-5, HOST-3
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

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}
