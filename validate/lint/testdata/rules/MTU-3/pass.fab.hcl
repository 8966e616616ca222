# MTU-3 pass: the smallest netdev MTUs that still give active_mtu 4096:
# 4096 + 96 = 4192 on mlx5, 4096 + 80 = 4176 on Soft-RoCE.
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"

  port "Ethernet0" {
    mtu = 4192
  }
  port "Ethernet4" {
    mtu = 4176
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
    mtu       = 4192
  }
}

host "h2" {
  address = "192.0.2.11"
  nic "eth1" {
    device    = "rxe0"
    model     = "rxe"
    addresses = ["2001:db8::1/127"]
    mtu       = 4176
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
