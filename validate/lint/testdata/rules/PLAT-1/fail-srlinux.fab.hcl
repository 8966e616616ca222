# PLAT-1 fail on SR Linux: an IP MTU whose port MTU (+14 bytes of Ethernet
# header, +4 per VLAN tag of the link) is above the 7220 IXR's 9412, an ECN
# probability of 0.4 % that rounds to 0 (max-drop-probability-percent is a
# whole percent: it would mark nothing), an ECN maximum of 5 GB (uint32:
# clamping would mark at another depth).
fabric "t" {
  transport = "rocev2"
}

class "roce" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  lossless  = true
  bandwidth = 50
  ecn {
    min         = "150KB"
    max         = "5GB" # expect: PLAT-1
    probability = 0.4 # expect: PLAT-1
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
    mtu = 9396 # expect: PLAT-1
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
  endpoints    = ["leaf1:ethernet-1/1", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
  vlan_tags    = 1
}
