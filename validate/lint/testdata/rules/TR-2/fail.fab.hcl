# TR-2 fail: a UDP range deny that covers 4791 is the first match on
# leaf1; spine1 remarks the RoCE and CNP code points.
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"

  acl "no-ssh" {
    action    = "deny"
    protocol  = "tcp"
    dst_ports = ["22"]
  }
  acl "no-udp-high" {
    action    = "deny"
    protocol  = "udp"
    dst_ports = ["4000-5000"] # expect: TR-2
  }
  acl "roce" {
    action    = "permit"
    protocol  = "udp"
    dst_ports = ["4791"]
  }
}

switch "spine1" {
  platform    = "sonic"
  address     = "192.0.2.2"
  role        = "spine"
  remark_dscp = { "26" = 0, "48" = 46, "10" = 12 } # expect: TR-2
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
