# IB-4 fail: an IPoIB group faster than a member's link, a rate opensm
# cannot set, a group MTU below the IPoIB MTU, and (no default partition
# declared) a default group at rdma_mtu 2048 under a 4092-byte IPoIB MTU.
fabric "t" {
  transport = "infiniband"
  mtu       = 4092 # expect: IB-4
  rdma_mtu  = 2048
}

infiniband {
  subnet_manager = "h1"
  partition "compute" {
    pkey    = "0x8001"
    members = ["h1:ib0", "h2:ib0"]
    rate    = "400G" # expect: IB-4
    mtu     = 2048   # expect: IB-4
    ipoib   = true
  }
  partition "odd" {
    pkey    = "0x8002"
    members = ["h1:ib0"]
    rate    = "350G" # expect: IB-4
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
    model  = "connectx-6"
    speed  = "200G"
    guid   = "0x0002c90300000002"
  }
}

link {
  endpoints    = ["h1:ib0", "h2:ib0"]
  speed        = "200G"
  cable_length = "2m"
}
