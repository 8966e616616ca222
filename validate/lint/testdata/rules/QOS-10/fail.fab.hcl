# QOS-10 fail: unmanaged settings carry the lossless RDMA class (the
# switch's trust and a port's PFC, a NIC's PFC, the host's rdma_cm ToS):
# the class is not proven on those devices.
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"
  unmanaged = { # expect: QOS-10
    "trust"              = "the switch trusts PCP and DSCP: the spec cannot say it"
    "port/Ethernet0/pfc" = "storage port: PFC set by the storage team"
  }
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
    unmanaged = { "pfc" = "mlnx_qos by the site's boot script" } # expect: QOS-10
  }
}

host "h2" {
  address   = "192.0.2.11"
  unmanaged = { "nic/eth1/tos" = "set by the job launcher" } # expect: QOS-10
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
