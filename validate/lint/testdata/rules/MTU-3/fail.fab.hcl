# MTU-3 fail: a fabric MTU of 4150 leaves mlx5 hosts at active_mtu 2048
# (one finding for every NIC that inherits it); a NIC at 1500 gets 1024.
# Soft-RoCE reserves 80 bytes, not 96, so rxe at 4180 still reaches 4096.
fabric "t" {
  transport = "rocev2"
  mtu       = 4150 # expect: MTU-3
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"

  port "Ethernet0" {}
  port "Ethernet4" {}
  port "Ethernet8" {
    mtu = 4180
  }
  port "Ethernet12" {
    mtu = 1500
  }
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
  }
}

host "h2" {
  address = "192.0.2.11"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["2001:db8::1/127"]
  }
}

host "h3" {
  address = "192.0.2.12"
  nic "eth1" {
    device    = "rxe0"
    model     = "rxe"
    addresses = ["10.0.0.5/31"]
    mtu       = 4180
  }
}

host "h4" {
  address = "192.0.2.13"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-6dx"
    addresses = ["10.0.0.7/31"]
    mtu       = 1500 # expect: MTU-3
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
  endpoints    = ["leaf1:Ethernet8", "h3:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet12", "h4:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}
