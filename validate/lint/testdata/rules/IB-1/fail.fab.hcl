# IB-1 fail: a member NIC without a GUID, two NICs with one GUID, two
# partitions with one P_Key, a name opensm cannot parse, a port listed as
# full and limited member.
fabric "t" {
  transport = "infiniband"
}

infiniband {
  subnet_manager = "h1"
  partition "compute" {
    pkey    = "0x8001"
    members = ["h1:ib0", "h3:ib0"] # expect: IB-1
  }
  partition "compute-too" {
    pkey            = "0x0001" # expect: IB-1
    members         = ["h2:ib0"]
    limited_members = ["h2"] # expect: IB-1
  }
  partition "my storage" { # expect: IB-1
    pkey    = "0x8003"
    members = ["h1:ib0"]
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
    guid   = "0x0002C90300000001" # expect: IB-1
  }
}

host "h3" {
  address = "192.0.2.12"
  nic "ib0" {
    device = "mlx5_0"
    model  = "connectx-7"
  }
}

link {
  endpoints    = ["h1:ib0", "h2:ib0"]
  speed        = "400G"
  cable_length = "2m"
}
