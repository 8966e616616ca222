# PLAT-1 fail on SONiC: a fractional ECN probability (green_drop_probability
# is a whole percent), a watchdog poll below POLL_INTERVAL's 100..1000 ms and
# a restoration time below the poll (sonic-pfcwd.yang must), a port MTU above
# sonic-port.yang's 9216. Plan's renderer (or CONFIG_DB's models) refuses each;
# a restoration time below the poll is also below SAFE-1's half.
fabric "t" {
  transport = "rocev2"
  pfc_watchdog {
    detect  = "1200ms"
    restore = "1100ms" # expect: PLAT-1
    poll    = "1150ms" # expect: PLAT-1, SAFE-1
  }
}

class "roce" {
  role     = "rdma"
  priority = 3
  dscp     = [26]
  lossless = true
  bandwidth = 50
  ecn {
    min         = "150KB"
    max         = "1500KB"
    probability = 7.5 # expect: PLAT-1
  }
}

class "cnp" {
  role     = "cnp"
  priority = 6
  dscp     = [48]
  strict   = true
}

class "default" {
  priority  = 0
  default   = true
  bandwidth = 50
}

credentials "ssh" {
  username = "admin"
  password = env("SWITCH_PASSWORD")
}

switch "leaf1" {
  platform    = "sonic"
  address     = "192.0.2.1"
  credentials = "ssh"
  role        = "leaf"
  port "Ethernet0" {
    mtu = 9300 # expect: PLAT-1
  }
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
