# MTU-2 pass: mtu = 0 is no MTU of its own but opensm's default group MTU
# (partitions.conf without mtu=), which a spec imported from such a file says.
fabric "t" {
  transport = "infiniband"
}

infiniband {
  subnet_manager = "h1"
  partition "storage" {
    pkey    = "0x8002"
    members = ["h1:ib0", "h2:ib0"]
    mtu     = 0
  }
}

host "h1" {
  address = "192.0.2.10"
  nic "ib0" {
    device = "mlx5_0"
    model  = "connectx-7"
    guid   = "0x0002c90300000001"
  }
}

host "h2" {
  address = "192.0.2.11"
  nic "ib0" {
    device = "mlx5_0"
    model  = "connectx-7"
    guid   = "0x0002c90300000002"
  }
}

link {
  endpoints    = ["h1:ib0", "h2:ib0"]
  speed        = "400G"
  cable_length = "2m"
}
