# IB-3 fail: a class on an SL that sl2vl drops (VL 15), a partition on an
# SL whose VL has no arbitration weight, a class on an SL whose VL is above
# what max_vls runs.
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
  sl        = 3 # expect: IB-3
  bandwidth = 30
}

class "bulk" {
  role      = "rdma"
  sl        = 4 # expect: IB-3
  bandwidth = 30
}

infiniband {
  subnet_manager = "h1"
  sl2vl          = [0, 1, 2, 15, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15]
  vl_arb_low     = { "0" = 128, "1" = 192, "2" = 0, "4" = 64 }
  max_vls        = 4
  partition "compute" {
    pkey    = "0x8001"
    members = ["h1:ib0", "h2:ib0"]
    sl      = 2 # expect: IB-3
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
