# QOS-9 fail: the RoCEv2 defaults make priority 3 lossless, so the OpenConfig
# leaf's host and uplink ports carry PFC that OpenConfig cannot configure (one
# warning per switch, at its platform). The SR Linux spine has PFC natively.
fabric "t" {
  transport = "rocev2"
}

credentials "gnmi" {
  username = "admin"
  password = env("SWITCH_PASSWORD")
  ca_file  = "/etc/fabctl/gnmi-ca.pem"
}

switch "leaf1" {
  platform    = "openconfig" # expect: QOS-9
  address     = "192.0.2.1:57400"
  credentials = "gnmi"
  role        = "leaf"
}

switch "spine1" {
  platform    = "srlinux"
  address     = "192.0.2.2:57400"
  credentials = "gnmi"
  role        = "spine"
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
