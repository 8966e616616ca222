# SAFE-1 fail: 2s/3s timers are inside SONiC's ranges, but the watchdog
# also runs on an SR Linux spine, whose deadlock timers stop at 1500 ms.
fabric "t" {
  transport = "rocev2"
  pfc_watchdog {
    detect  = "2s" # expect: SAFE-1
    restore = "3s" # expect: SAFE-1
    poll    = "500ms"
  }
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"
}

switch "spine1" {
  platform = "srlinux"
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

link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:ethernet-1/1"]
  speed        = "400G"
  cable_length = "10m"
}
