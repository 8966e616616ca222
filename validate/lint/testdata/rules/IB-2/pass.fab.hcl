# IB-2 pass: VL arbitration weights in whole 4 KB packets (64 credits),
# zero skips an entry.
fabric "t" {
  transport = "infiniband"
}

infiniband {
  subnet_manager = "h1"
  vl_arb_high    = { "1" = 64 }
  vl_arb_low     = { "0" = 64, "1" = 192, "2" = 0, "3" = 128 }
  partition "compute" {
    pkey    = "0x8001"
    members = ["h1:ib0", "h2:ib0"]
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
