# IB-4 pass: IPoIB partitions at an opensm rate every member reaches, with
# group MTUs that hold the 4092-byte IPoIB MTU.
fabric "t" {
  transport = "infiniband"
  mtu       = 4092
}

infiniband {
  subnet_manager = "h1"
  partition "compute" {
    pkey    = "0x8001"
    members = ["h1:ib0", "h2:ib0"]
    rate    = "200G"
    ipoib   = true
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
  speed        = "200G"
  cable_length = "2m"
}
