# An OpenConfig leaf with what OpenConfig can express: the DSCP map of the
# classes (two code points for RoCE), three classes (ETS 60/40 and a strict
# CNP class), ECN with a fractional probability (OpenConfig holds whole
# percents: 7.5 is rendered 8 and reads back as 7.5), 802.3x pause on a port
# without PFC, and a port with a smaller MTU. PFC, the watchdog and cable
# lengths are listed as not expressible.
fabric "oc" {
  transport = "rocev2"
  mtu       = 9000
}

class "roce" {
  role      = "rdma"
  priority  = 3
  dscp      = [24, 26]
  lossless  = true
  bandwidth = 60
  ecn {
    min         = "200KB"
    max         = "2MB"
    probability = 7.5
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
  bandwidth = 40
}

credentials "gnmi" {
  username = "admin"
  password = env("FABCTL_TESTBED_PASSWORD")
  ca_file  = "ca.pem"
}

switch "leaf1" {
  platform    = "openconfig"
  address     = "192.0.2.1:57400"
  credentials = "gnmi"
  role        = "leaf"
  lint_ignore = { "QOS-9" = "test spec: PFC is listed as not expressible" }

  port "Ethernet0" {}
  port "Ethernet48" {}
  port "Ethernet8" {
    pause = true
    pfc   = []
  }
  port "Ethernet12" {
    trust = "dscp"
    mtu   = 4200
  }
}

switch "spine1" {
  platform    = "openconfig"
  address     = "192.0.2.2:57400"
  credentials = "gnmi"
  role        = "spine"
  lint_ignore = { "QOS-9" = "test spec" }
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
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}
