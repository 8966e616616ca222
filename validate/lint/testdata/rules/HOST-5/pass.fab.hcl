# HOST-5 pass: each link runs at or below its NIC model's fastest port
# speed (ConnectX-7 400G, ConnectX-6 Dx 200G); rxe is software and not
# checked.
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"
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
    model     = "connectx-6dx"
    addresses = ["10.0.0.3/31"]
  }
}

host "h3" {
  address = "192.0.2.12"
  nic "eth1" {
    device    = "rxe0"
    model     = "rxe"
    addresses = ["10.0.0.5/31"]
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "400G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet8", "h2:eth1"]
  speed        = "200G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet16", "h3:eth1"]
  speed        = "800G"
  cable_length = "3m"
}
