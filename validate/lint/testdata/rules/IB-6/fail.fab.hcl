# IB-6 fail: a partition member without a cable, a partition MTU above
# rdma_mtu, an SL mapped to a VL the switches do not run.
fabric "t" {
  transport = "infiniband"
  mtu       = 2044
  rdma_mtu  = 2048
}

switch "leaf1" {
  platform = "infiniband"
  ports    = 8
  vls      = 4
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

infiniband {
  subnet_manager = "h1"
  sl2vl          = [0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] # expect: IB-6

  partition "compute" {
    pkey    = "0x8001"
    members = ["h1:ib0", "h2:ib0"] # expect: IB-6
    mtu     = 4096                 # expect: IB-6
  }
}

link {
  endpoints = ["leaf1:1", "h1:ib0"]
  speed     = "HDR"
  width     = "4x"
}
