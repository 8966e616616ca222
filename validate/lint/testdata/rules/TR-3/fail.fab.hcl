# TR-3 fail: a lossless class and a port PFC override kept for iWARP only;
# h1's Intel NIC has no VLAN, so iWARP PFC cannot work there at all.
fabric "t" {
  transport = "iwarp"
}

class "rdma" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  lossless  = true # expect: TR-3
  bandwidth = 50
  ecn {
    min = "150KB"
    max = "1.5MB"
  }
}

class "default" {
  priority  = 0
  default   = true
  bandwidth = 50
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"

  port "Ethernet0" {
    pfc = [3] # expect: TR-3
  }
  port "Ethernet4" {}
  port "Ethernet48" {}
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
  role     = "spine"
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" { # expect: TR-3
    device    = "irdma0"
    model     = "e810"
    addresses = ["10.0.0.1/31"]
  }
}

host "h2" {
  address = "192.0.2.11"
  nic "eth1" {
    device    = "irdma0"
    model     = "e810"
    addresses = ["10.0.0.3/31"]
    vlan      = 100
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
