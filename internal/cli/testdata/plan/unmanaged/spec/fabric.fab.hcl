# A fabric adopted with fabctl import: what the spec cannot say, or the
# team does not manage, is left as the devices run it (unmanaged).
fabric "adopted" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  unmanaged = {
    "trust"              = "the switch trusts PCP and DSCP (trust both): the spec cannot say it"
    "port/Ethernet0/pfc" = "storage port: PFC set by the storage team"
    "tc/1"               = "a vendor QoS profile's class the spec does not have"
  }
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["10.0.0.1/31"]
    unmanaged = { "tos" = "the job launcher sets rdma_cm's ToS" }
  }
}

link {
  endpoints = ["leaf1:Ethernet0", "h1:eth1"]
  speed     = "100G"
}
