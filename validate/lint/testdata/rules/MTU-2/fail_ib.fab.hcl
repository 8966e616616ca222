# MTU-2 fail: an InfiniBand partition MTU that opensm cannot express.
fabric "t" {
  transport = "infiniband"
}

infiniband {
  subnet_manager = "h1"
  partition "storage" {
    pkey    = "0x8002"
    members = ["h1:ib0", "h2:ib0"]
    mtu     = 2000 # expect: MTU-2
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
