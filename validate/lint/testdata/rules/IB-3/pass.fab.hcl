# IB-3 pass: every SL in use maps to a VL with arbitration weight.
fabric "t" {
  transport = "infiniband"
}

class "default" {
  role      = "other"
  sl        = 0
  default   = true
  bandwidth = 40
}

class "mpi" {
  role      = "rdma"
  sl        = 1
  bandwidth = 60
}

infiniband {
  subnet_manager = "h1"
  sl2vl          = [0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15]
  vl_arb_high    = { "1" = 64 }
  vl_arb_low     = { "0" = 128, "1" = 192 }
  max_vls        = 2
  vl_high_limit  = 16
  partition "compute" {
    pkey    = "0x8001"
    members = ["h1:ib0", "h2:ib0"]
    sl      = 2
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
