# Differential test counterexample (fabric 44, seed 20261128, shrunk): lint-clean
# before PLAT-1, and plan refused it:
#   leaf-nxos (nxos) refuses to render: leaf-nxos: trust "pcp": the switch's default classification is DSCP on NX-OS (class-map type qos ... match dscp); ports may trust pcp
# Since NX-OS builds a switch that trusts pcp (FABCTL-QOS-COS on every managed port, no DSCP
# classification), this spec is lint-clean and must render and validate: no "expect" line.
fabric "diff" {
  transport = "rocev1"
}

credentials "c" {
  username = "admin"
  password = env("DIFF_PW")
}

switch "spine" {
  platform = "sonic"
  address = "192.0.2.250"
  credentials = "c"
  role = "spine"
}

switch "leaf-nxos" {
  platform = "nxos"
  address = "192.0.2.1"
  credentials = "c"
  role = "leaf"
  port "Ethernet1/1" {
  }
  port "Ethernet1/2" {
  }
  port "Ethernet1/3" {
  }
}

host "h-nxos-0" {
  address = "198.51.100.10"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.0.1/24"]
    vlan = 100
  }
}

link {
  endpoints = ["leaf-nxos:Ethernet1/1", "h-nxos-0:eth1"]
  speed = "400G"
  vlan_tags = 1
}

host "h-nxos-1" {
  address = "198.51.100.11"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.0.2/24"]
    vlan = 100
  }
}

link {
  endpoints = ["leaf-nxos:Ethernet1/2", "h-nxos-1:eth1"]
  speed = "400G"
  vlan_tags = 1
}

link {
  endpoints = ["leaf-nxos:Ethernet1/3", "spine:Ethernet0"]
  speed = "400G"
}
