# SAFE-1 fail: the fabric watchdog is off, leaving lossless ports unguarded;
# one port turns it off explicitly; where it runs (Ethernet0), its timers
# are outside SONiC's ranges and it polls too slowly.
fabric "t" {
  transport = "rocev2"
  pfc_watchdog {
    enabled = false   # expect: SAFE-1
    detect  = "50ms"  # expect: SAFE-1
    restore = "90s"   # expect: SAFE-1
    poll    = "100ms" # expect: SAFE-1
  }
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"

  port "Ethernet0" {
    pfc_watchdog = true
  }
  port "Ethernet4" {
    pfc_watchdog = false # expect: SAFE-1
  }
  port "Ethernet48" {}
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
  role     = "spine"
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
}

host "h2" {
  address = "192.0.2.11"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.3/31"]
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet4", "h2:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}
