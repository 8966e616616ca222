# Differential test counterexample (fabric 17, seed 20261128, shrunk): lint-clean
# before PLAT-1, and plan refused it:
#   spine (sonic) refuses to render: port Ethernet0: mtu 9400 outside SONiC's 68..9216 (PORT mtu is the IP MTU)
# expect: PLAT-1
fabric "diff" {
  transport = "rocev2"
  mtu = 9400
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

switch "leaf-sonic" {
  platform = "sonic"
  address = "192.0.2.1"
  credentials = "c"
  role = "leaf"
  port "Ethernet0" {
  }
  port "Ethernet4" {
  }
  port "Ethernet8" {
  }
}

host "h-sonic-0" {
  address = "198.51.100.10"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
}

link {
  endpoints = ["leaf-sonic:Ethernet0", "h-sonic-0:eth1"]
  speed = "400G"
}

host "h-sonic-1" {
  address = "198.51.100.11"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.1.1/31"]
  }
}

link {
  endpoints = ["leaf-sonic:Ethernet4", "h-sonic-1:eth1"]
  speed = "400G"
}

link {
  endpoints = ["leaf-sonic:Ethernet8", "spine:Ethernet0"]
  speed = "400G"
}
