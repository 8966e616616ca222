# QOS-9 pass: a lossy, DCQCN-controlled RoCEv2 fabric (no lossless class, so
# no PFC anywhere): everything it needs is expressible in OpenConfig.
fabric "t" {
  transport = "rocev2"
}

class "roce" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  bandwidth = 50
  ecn {
    min = "150KB"
    max = "1.5MB"
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
  platform    = "openconfig"
  address     = "192.0.2.1:57400"
  credentials = "gnmi"
  role        = "leaf"
}

switch "spine1" {
  platform    = "openconfig"
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
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}
