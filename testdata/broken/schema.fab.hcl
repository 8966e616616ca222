# Broken on purpose: schema errors the loader reports, each with the
# attribute it comes from. Lint does not run on a spec that does not load.
fabric "pod1" {
  transport = "rocev2"
  rdma_mtu  = [4096] # expect: LOAD
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
}

switch "leaf1" { # expect: LOAD
  platform = "sonic"
  address  = "192.0.2.2"
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device = "mlx5_0"
    speed  = "400Q" # expect: LOAD
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "400G"
  cable_lenght = "3m" # expect: LOAD
}

link {
  endpoints = ["leaf1:Ethernet4", "h9:eth1"] # expect: LOAD
  speed     = "400G"
}
