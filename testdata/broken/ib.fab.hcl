# Broken on purpose: an InfiniBand fabric (the IB rules, and TR-4 for IB).
#   TR-4  Ethernet QoS on InfiniBand: a DSCP list and a PFC class
#   IB-1  a partition member without a port GUID, two partitions on one P_Key
#   IB-2  VL arbitration weights that are not whole 4 KB packets (64 credits)
#   IB-3  an SL that sl2vl sends to VL 15 (drop)
#   IB-4  an IPoIB group faster than a member's link
fabric "hpc" {
  transport = "infiniband"
  mtu       = 4092
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
  dscp      = [26] # expect: TR-4
  lossless  = true # expect: TR-4
  bandwidth = 60
}

class "bulk" {
  role = "other"
  sl   = 3 # expect: IB-3
}

infiniband {
  subnet_manager = "sm01"
  sl2vl          = [0, 1, 0, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15]
  vl_arb_low     = { "0" = 16, "1" = 96 } # expect: IB-2

  partition "compute" {
    pkey    = "0x8001"
    members = ["sm01:ib0", "cn01:ib0", "cn02:ib0"] # expect: IB-1
    rate    = "400G"                               # expect: IB-4
    ipoib   = true
  }

  partition "scratch" {
    pkey    = "0x0001" # expect: IB-1
    members = ["cn01:ib0"]
  }
}

host "sm01" {
  address = "10.0.1.1"
  nic "ib0" {
    device = "mlx5_0"
    model  = "connectx-7"
    guid   = "0x0c42a10300000101"
  }
}

host "cn01" {
  address = "10.0.1.11"
  nic "ib0" {
    device = "mlx5_0"
    model  = "connectx-7"
    guid   = "0x0c42a10300000b01"
  }
}

host "cn02" {
  address = "10.0.1.12"
  nic "ib0" {
    device = "mlx5_0"
    model  = "connectx-6"
    speed  = "200G"
  }
}
