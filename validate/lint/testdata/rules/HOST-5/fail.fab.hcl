# HOST-5 fail: 4000G on a ConnectX-7 (400G at most), 400G on a
# ConnectX-6 Dx (200G at most); rxe is not checked.
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
  speed        = "4000G" # expect: HOST-5
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet8", "h2:eth1"]
  speed        = "400G" # expect: HOST-5
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet16", "h3:eth1"]
  speed        = "800G"
  cable_length = "3m"
}
