# BUF-1 fail: 50KB of headroom is below what 100G/3m needs (59KB) and far
# below 400G/150m (255KB); a link with no cable_length next to a declared
# headroom; a lossless cable longer than 100 m.
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"
  buffer {
    total    = "64MB"
    headroom = "50KB" # expect: BUF-1
  }
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

link { # expect: BUF-1
  endpoints = ["leaf1:Ethernet4", "h2:eth1"]
  speed     = "25G"
}

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "150m" # expect: BUF-1
}
