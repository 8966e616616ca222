# Differential test counterexample (seed 1, shrunk): lint-clean with
# PLAT-1's first cut (bandwidth checked per class, not per priority), and
# plan refused it: the RDMA and default classes share priority 0, whose
# SONiC scheduler weight is their sum:
#   spine (sonic) refuses to render: traffic class 0: DWRR weight 160 outside SONiC's 1..100
# expect: PLAT-1, QOS-7
fabric "diff" {
  transport = "rocev2"
}

class "roce" {
  role = "rdma"
  priority = 0
  dscp = [24, 26]
  bandwidth = 60
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
  speed = "400G"
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
  speed = "400G"
}

link {
  endpoints = ["leaf-srlinux:ethernet-1/3", "spine:Ethernet0"]
  speed = "400G"
}
