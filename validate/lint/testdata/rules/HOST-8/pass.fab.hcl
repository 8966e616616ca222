# HOST-8 pass: the same hosts on 999 m, which mlx5 takes (below MLX5E_MAX_CABLE_LENGTH);
# the E810 pair keeps 1.2 km (not mlx5).
fabric "t" {
  transport = "rocev2"
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
  nic "eth2" {
    device    = "ice_0"
    model     = "e810"
    addresses = ["10.0.1.1/31"]
  }
}

host "h2" {
  address = "192.0.2.11"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.0/31"]
  }
  nic "eth2" {
    device    = "ice_0"
    model     = "e810"
    addresses = ["10.0.1.0/31"]
  }
}

link {
  endpoints    = ["h1:eth1", "h2:eth1"]
  speed        = "100G"
  cable_length = "999m"
}

link {
  endpoints    = ["h1:eth2", "h2:eth2"]
  speed        = "100G"
  cable_length = "1.2km"
}
