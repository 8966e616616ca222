# QOS-2 fail: a PCP-trusting port facing a DSCP host, and a PCP-trusting
# spine facing a DSCP leaf. h2's NIC trusts PCP too: that is HOST-3's
# finding (NIC vs fabric), not reported again by QOS-2.
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"

  port "Ethernet0" {
    trust = "pcp" # expect: QOS-2
  }
  port "Ethernet4" {}
  port "Ethernet48" {}
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
  role     = "spine"
  trust    = "pcp" # expect: QOS-2
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
    trust     = "pcp" # expect: HOST-3
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
