# SAFE-1 pass: watchdog on (explicit timers inside SONiC's ranges, polling
# at half the detection time); a port without lossless traffic may turn it
# off.
fabric "t" {
  transport = "rocev2"
  pfc_watchdog {
    detect  = "400ms"
    restore = "2s"
    poll    = "200ms"
    action  = "drop"
  }
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"

  port "Ethernet0" {}
  port "Ethernet4" {}
  port "Ethernet48" {}
  port "Ethernet60" {
    pfc          = []
    pfc_watchdog = false
    description  = "management uplink, lossy"
  }
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
