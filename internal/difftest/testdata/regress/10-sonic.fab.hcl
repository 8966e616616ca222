# Differential test counterexample (fabric 14, seed 20261128, shrunk): lint-clean
# before PLAT-1, and plan refused it:
#   spine (sonic) refuses to render: traffic class 5: ECN probability 7.5: SONiC's green_drop_probability is a whole percent 1..100
# expect: PLAT-1, QOS-7
fabric "diff" {
  transport = "rocev2"
}

class "roce" {
  role = "rdma"
  priority = 5
  dscp = [26, 27]
  lossless = true
  bandwidth = 70
  ecn {
    min = "150KB"
    max = "5GB"
    probability = 7.5
  }
}

class "cnp" {
  role = "cnp"
  priority = 7
  dscp = [48]
  strict = true
}

class "default" {
  role = "other"
  priority = 0
  default = true
  bandwidth = 100
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

switch "leaf-openconfig" {
  platform = "openconfig"
  address = "192.0.2.1"
  credentials = "c"
  role = "leaf"
  port "Ethernet0" {
  }
  port "Ethernet1" {
  }
  port "Ethernet2" {
  }
}

host "h-openconfig-0" {
  address = "198.51.100.10"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
}

link {
  endpoints = ["leaf-openconfig:Ethernet0", "h-openconfig-0:eth1"]
  speed = "25G"
}

host "h-openconfig-1" {
  address = "198.51.100.11"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.1.1/31"]
  }
}

link {
  endpoints = ["leaf-openconfig:Ethernet1", "h-openconfig-1:eth1"]
  speed = "25G"
}

link {
  endpoints = ["leaf-openconfig:Ethernet2", "spine:Ethernet0"]
  speed = "400G"
}
