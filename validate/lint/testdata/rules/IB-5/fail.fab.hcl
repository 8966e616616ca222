# IB-5 fail: a port past the switch's count, a named port on an InfiniBand
# switch, a link without width and speed.
fabric "t" {
  transport = "infiniband"
}

switch "leaf1" {
  platform = "infiniband"
  ports    = 8
}

host "h1" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0002c90300000001"
  }
}

host "h2" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0002c90300000011"
  }
}

host "h3" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0002c90300000021"
  }
}

infiniband {
  subnet_manager = "h1"
}

link {
  endpoints = ["leaf1:9", "h1:ib0"] # expect: IB-5
  speed     = "HDR"
  width     = "4x"
}

link {
  endpoints = ["leaf1:Ethernet1", "h2:ib0"] # expect: IB-5
  speed     = "HDR"
  width     = "4x"
}

link {
  endpoints = ["leaf1:3", "h3:ib0"] # expect: IB-5
  speed     = "200G"
}
