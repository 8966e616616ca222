# IB-1 pass: every member NIC has a port GUID, P_Keys and names unique, a
# bare host member (all its NICs) and opensm keywords.
fabric "t" {
  transport = "infiniband"
}

infiniband {
  subnet_manager = "h1"
  partition "compute" {
    pkey    = "0x8001"
    members = ["h1:ib0", "h2"]
  }
  partition "storage.v2" {
    pkey            = "0x8002"
    members         = ["SELF"]
    limited_members = ["ALL"]
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
    guid   = "0002:c903:0000:0002"
  }
  nic "ib1" {
    device = "mlx5_1"
    model  = "connectx-7"
    guid   = "0x0002c90300000003"
  }
}

link {
  endpoints    = ["h1:ib0", "h2:ib0"]
  speed        = "400G"
  cable_length = "2m"
}
