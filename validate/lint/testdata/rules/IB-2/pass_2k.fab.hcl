# IB-2 pass: with a 2 KB MTU everywhere one packet is 32 credits.
fabric "t" {
  transport = "infiniband"
  rdma_mtu  = 2048
}

infiniband {
  subnet_manager = "h1"
  vl_arb_low     = { "0" = 32, "1" = 96 }
  partition "compute" {
    pkey    = "0x8001"
    members = ["h1:ib0", "h2:ib0"]
    mtu     = 2048
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
