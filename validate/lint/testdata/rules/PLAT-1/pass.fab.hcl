# PLAT-1 pass: every platform at the edges its model takes: SR Linux's port
# MTU 9412 with a VLAN tag (IP MTU 9394), whole-percent ECN, SONiC's poll at
# 200 ms under detection and restoration, EOS at 9214, NX-OS trusting DSCP.
fabric "t" {
  transport = "rocev2"
  pfc_watchdog {
    detect  = "400ms"
    restore = "800ms"
    poll    = "200ms"
  }
}

class "roce" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  lossless  = true
  bandwidth = 50
  ecn {
    min         = "150KB"
    max         = "1500KB"
    probability = 10
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

credentials "gnmi" {
  username = "admin"
  password = env("SWITCH_PASSWORD")
  ca_file  = "/etc/fabctl/gnmi-ca.pem"
}

switch "leaf1" {
  platform    = "srlinux"
  address     = "192.0.2.1:57400"
  credentials = "gnmi"
  role        = "leaf"
  port "ethernet-1/1" {
    mtu = 9394
  }
}

switch "leaf2" {
  platform    = "eos"
  model       = "DCS-7060X6-64PE-F"
  address     = "192.0.2.2"
  credentials = "ssh"
  role        = "leaf"
  port "Ethernet1" {
    mtu = 9214
  }
}

switch "leaf3" {
  platform    = "nxos"
  address     = "192.0.2.3"
  credentials = "ssh"
  role        = "leaf"
}

switch "leaf4" {
  platform    = "sonic"
  address     = "192.0.2.4"
  credentials = "ssh"
  role        = "leaf"
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
  endpoints    = ["leaf1:ethernet-1/1", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
  vlan_tags    = 1
}
