# A small valid fabric: two leaves, two hosts.
fabric "pod1" {
  transport = "rocev2"
  mtu       = 9000
}

credentials "sw" {
  username = "admin"
  password = env("FAB_SWITCH_PASSWORD")
}

switch "leaf1" {
  platform    = "sonic"
  address     = "192.0.2.1"
  credentials = "sw"
}

switch "border1" {
  platform    = "eos"
  address     = "192.0.2.2"
  role        = "border"
  tier        = 2
  credentials = "sw"
}

switch "border2" {
  platform    = "eos"
  address     = "192.0.2.3"
  role        = "border"
  tier        = 2
  credentials = "sw"
  lint_ignore = { "TEST-1" = "border pair shared with storage by design" }
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["10.0.0.1/31"]
  }
}

host "h2" {
  address = "192.0.2.11"
  nic "eth1" {
    device    = "mlx5_1"
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
  endpoints    = ["leaf1:Ethernet8", "border1:Ethernet1"]
  speed        = "400G"
  cable_length = "10m"
}
