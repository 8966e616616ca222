# TR-4 fail: Ethernet QoS written into an InfiniBand spec, and no
# infiniband block (so no subnet manager).
fabric "t" {
  transport = "infiniband" # expect: TR-4
  trust     = "dscp" # expect: TR-4
  pfc_watchdog { # expect: TR-4
    enabled = true
  }
}

class "data" {
  priority  = 3
  sl        = 3
  dscp      = [26] # expect: TR-4
  lossless  = true # expect: TR-4
  bandwidth = 50
  ecn { # expect: TR-4
    min = "150KB"
    max = "1.5MB"
  }
}

class "default" {
  priority  = 0
  default   = true
  bandwidth = 50
}

host "h1" {
  address = "192.0.2.10"
  nic "ib0" {
    device = "mlx5_0"
    model  = "connectx-7"
    pfc    = [3] # expect: TR-4
  }
}

host "h2" {
  address = "192.0.2.11"
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
