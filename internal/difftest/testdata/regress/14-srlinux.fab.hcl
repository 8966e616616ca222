# Differential test counterexample (fabric 0, seed 20261128, shrunk): lint-clean
# before PLAT-1, and plan refused it:
#   leaf-srlinux (srlinux) refuses to render: leaf-srlinux: traffic class 4: ECN maximum 5000000000 bytes: SR Linux's max-threshold-bytes and maximum-burst-size are at most 4294967295 (uint32)
# expect: PLAT-1
fabric "diff" {
  transport = "rocev2"
}

class "roce" {
  role = "rdma"
  priority = 4
  dscp = [24, 26]
  bandwidth = 70
  ecn {
    min = "1KB"
    max = "5GB"
  }
}

class "cnp" {
  role = "cnp"
  priority = 6
  dscp = [48]
  strict = true
}

class "default" {
  role = "other"
  priority = 0
  default = true
  bandwidth = 30
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

switch "leaf-srlinux" {
  platform = "srlinux"
  address = "192.0.2.1"
  credentials = "c"
  role = "leaf"
  port "ethernet-1/1" {
  }
  port "ethernet-1/2" {
  }
  port "ethernet-1/3" {
  }
}

host "h-srlinux-0" {
  address = "198.51.100.10"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
}

link {
  endpoints = ["leaf-srlinux:ethernet-1/1", "h-srlinux-0:eth1"]
  speed = "25G"
}

host "h-srlinux-1" {
  address = "198.51.100.11"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.1.1/31"]
  }
}

link {
  endpoints = ["leaf-srlinux:ethernet-1/2", "h-srlinux-1:eth1"]
  speed = "25G"
}

link {
  endpoints = ["leaf-srlinux:ethernet-1/3", "spine:Ethernet0"]
  speed = "400G"
}
