# HOST-8 fail: a ConnectX-7 carries the lossless RoCE class over 1.2 km of
# fibre; mlx5 takes a cable length below 1000 m only (MLX5E_MAX_CABLE_LENGTH)
# and pauses with the headroom of 7 m. The E810 on the same length is not
# mlx5 (ice keeps its PFC link delay in firmware).
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
  cable_length = "1.2km" # expect: HOST-8, HOST-8
}

link {
  endpoints    = ["h1:eth2", "h2:eth2"]
  speed        = "100G"
  cable_length = "1.2km"
}
