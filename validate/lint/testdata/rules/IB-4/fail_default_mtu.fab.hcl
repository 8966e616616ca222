# IB-4 fail: mtu = 0 is opensm's default group MTU, 2048 (linux-rdma/opensm
# doc/partition-config.txt): an IPoIB partition without an MTU of its own
# gives datagram-mode IPoIB 2044 bytes, below the fabric's 4092.
fabric "t" {
  transport = "infiniband"
  mtu       = 4092
  rdma_mtu  = 4096
}

infiniband {
  subnet_manager = "h1"
  partition "compute" {
    pkey    = "0x8001"
    members = ["h1:ib0", "h2:ib0"]
    mtu     = 0 # expect: IB-4
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
