fabric "pod1" {
  transport = "rocev3"
}

switch "leaf1" {
  platfrom = "sonic"
  address  = "192.0.2.1"
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device = "mlx5_0"
    speed  = "400Q"
  }
}

link {
  endpoints = ["leaf1:Ethernet0", "h2:eth1"]
  speed     = "100G"
}
